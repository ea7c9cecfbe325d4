"""Weighted least squares, MAE and VIF of the study's polynomial families."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bftune.learning.index import regression as rg
from bftune.learning.index.report import markdown, tables
from bftune.schedulers.core.policies import get_policy
from bftune.schedulers.core.polynomial import family_features


def rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    p = np.exp(rng.uniform(0, 11, n))
    q = rng.integers(1, 257, n).astype(float)
    r = rng.uniform(0, 3e4, n)
    return p, q, r


def test_family_features_follow_the_study_table_1():
    assert family_features("Lin") == ("1", "p", "q", "r")
    assert len(family_features("Qdr")) == 8 and len(family_features("Cub")) == 13
    assert family_features("Qua")[-6:] == ("p^4", "q^4", "r^4", "p^3*q", "p^2*q^2", "p*q^3")


@pytest.mark.parametrize("family", ["Lin", "Qdr", "Cub"])
def test_exact_data_gives_back_known_coefficients(family):
    p, q, r = rows()
    feats = family_features(family)
    rng = np.random.default_rng(1)
    x = rg.design(p, q, r, feats)
    truth = rng.normal(size=len(feats)) / np.linalg.norm(x, axis=0)  # every term matters
    fit = rg.fit(p, q, r, x @ truth, family)
    assert fit.coefficients == pytest.approx(truth, rel=1e-6, abs=0)
    assert fit.mae < 1e-9 * np.abs(x @ truth).mean()


def test_weights_are_p_times_q_on_the_residuals():
    p, q, r = rows(300, 2)
    score = 0.03 + 1e-7 * p - 2e-5 * q + 1e-7 * r + np.random.default_rng(3).normal(0, 0.01, len(p))
    fit = rg.fit(p, q, r, score, "Lin")
    x = rg.design(p, q, r, family_features("Lin"))
    w = (p * q) ** 2  # the normal equations of sum [(p q)(f - s)]^2
    direct = np.linalg.solve(x.T @ (w[:, None] * x), x.T @ (w * score))
    assert fit.coefficients == pytest.approx(direct, rel=1e-8)
    assert fit.mae == pytest.approx(np.mean(np.abs(x @ direct - score)))
    unweighted = np.linalg.lstsq(x, score, rcond=None)[0]
    assert not np.allclose(unweighted, direct, rtol=1e-3)  # the weights change the answer


def test_vif_equals_regressing_each_feature_on_the_others():
    p, q, r = rows(500, 4)
    for family in ("Lin", "Qdr", "Cub"):
        feats = [f for f in family_features(family) if f != "1"]
        x = rg.design(p, q, r, tuple(feats))
        got = rg.vif(x)
        z = (x - x.mean(axis=0)) / x.std(axis=0)  # R^2 is invariant to scaling; unscaled lstsq would truncate
        for k in range(x.shape[1]):
            others = np.column_stack([np.ones(len(p)), np.delete(z, k, axis=1)])
            coef = np.linalg.lstsq(others, z[:, k], rcond=None)[0]
            resid = z[:, k] - others @ coef
            r2 = 1 - resid @ resid / np.sum(z[:, k] ** 2)
            assert got[k] == pytest.approx(1 / (1 - r2), rel=1e-5), (family, feats[k])
    assert rg.vif(rg.design(p, q, r, ("p", "q", "r"))).max() < 1.1  # independent draws: no inflation


def test_fit_json_is_a_policy_and_tables_name_every_family(tmp_path):
    p, q, r = rows(300, 5)
    score = 0.03 + 1e-7 * p + 2e-5 * q - 1e-7 * r
    fits = rg.fit_all(p, q, r, score)
    assert [f.family for f in fits] == ["Lin", "Qdr", "Cub", "Qua"]
    path = tmp_path / "Lin.json"
    path.write_text(json.dumps(fits[0].to_json()))
    policy = get_policy(f"learned:{path}")
    assert policy.name == f"learned:{path}"
    assert policy.value(100.0, 8.0, 50.0) == pytest.approx(0.03 + 1e-5 + 1.6e-4 - 5e-6, rel=1e-6)
    coef, summary = tables(fits)
    assert list(summary["family"]) == ["Lin", "Qdr", "Cub", "Qua"] and len(coef) == 19
    text = markdown(fits)
    assert "| Lin | 4 |" in text and "p*q^3" in text
