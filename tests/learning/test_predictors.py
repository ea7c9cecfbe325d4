"""Runtime predictors: what each one learns and predicts, and the tie rules that keep both backends equal."""

from __future__ import annotations

import pytest
from bftune.learning.predictors import AverageOfTwo, LastModel, PredictorError, make_predictor, parse_predictor


def test_avg2_is_the_mean_of_the_users_last_two_runtimes_capped_at_the_request():
    p = AverageOfTwo()
    assert p.predict(1, user=7, walltime=3600, runtime=0, now=0) == 3600  # no history: the request
    p.observe(1, user=7, runtime=100, walltime=3600, now=100)
    assert p.predict(2, user=7, walltime=3600, runtime=0, now=150) == 100  # one run: that one
    p.observe(2, user=7, runtime=300, walltime=3600, now=450)
    p.observe(3, user=7, runtime=500, walltime=3600, now=950)
    assert p.predict(4, user=7, walltime=3600, runtime=0, now=1000) == 400  # (300 + 500) / 2: the last two
    assert p.predict(5, user=7, walltime=200, runtime=0, now=1000) == 200  # never past the request
    assert p.predict(6, user=8, walltime=60, runtime=0, now=1000) == 60  # another user: no history
    assert p.predict(7, user=-1, walltime=90, runtime=0, now=1000) == 90  # no user id
    assert p.report() == {"from_history": 3, "no_history": 2, "no_user_id": 1,
                          "note": "1 predictions for jobs without a user id used the walltime"}


def test_avg2_ignores_runs_ending_at_the_prediction_instant_whatever_their_order():
    """Batsim may deliver a completion and a submission of one instant in either order."""
    for order in ([(2, 300), (3, 900)], [(3, 900), (2, 300)]):
        p = AverageOfTwo()
        p.observe(1, user=1, runtime=100, walltime=1000, now=100)
        assert p.predict(9, user=1, walltime=1000, runtime=0, now=500) == 100
        for seq, runtime in order:
            p.observe(seq, user=1, runtime=runtime, walltime=1000, now=500)
        assert p.predict(10, user=1, walltime=1000, runtime=0, now=500) == 100  # the runs ending now are left out
        # later: the two latest by (end, job number) are jobs 2 and 3, whichever came first
        assert p.predict(11, user=1, walltime=1000, runtime=0, now=501) == 600
        p.observe(4, user=1, runtime=50, walltime=1000, now=700)
        assert p.predict(12, user=1, walltime=1000, runtime=0, now=800) == (900 + 50) / 2


def test_last_model_takes_the_ratio_of_the_last_run():
    p = LastModel()
    p.observe(1, user=3, runtime=50, walltime=100, now=60)
    assert p.predict(2, user=3, walltime=1000, runtime=0, now=60) == 1000  # it ended now: not yet known
    assert p.predict(3, user=3, walltime=1000, runtime=0, now=61) == 500


@pytest.mark.parametrize("text, name", [("AVG2", "avg2"), (" avg2 ", "avg2"), ("Last", "last")])
def test_names_are_normalised(text, name):
    assert parse_predictor(text) == name
    assert make_predictor(text).name == name


@pytest.mark.parametrize("text", ["avg2:3", "avg3", ""])
def test_bad_names_list_the_choices(text):
    with pytest.raises(PredictorError, match="avg2|takes no parameter|expected a predictor"):
        parse_predictor(text)


def test_a_registered_predictor_is_a_choice_of_the_option_table(monkeypatch):
    from bftune.learning import predictors
    from bftune.schedulers.config import SchedulerConfig

    def half(parameter: str, seed: int):
        return predictors.ExactPredictor()

    monkeypatch.setitem(predictors.PREDICTOR_KINDS, "toy", predictors.PredictorKind("toy", half, "a toy"))
    assert parse_predictor("TOY") == "toy" and make_predictor("toy").name == "exact"
    config = SchedulerConfig.from_options({"scheduler": "pv-easy", "predictor": "toy"})
    assert config.to_dict()["predictor"] == "toy"
    with pytest.raises(ValueError, match="registered twice"):
        predictors.register_predictor(predictors.PredictorKind("last", half, "again"))
