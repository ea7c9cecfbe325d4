"""slurm.conf in and out: a site's priority and backfill keys as scheduler options, and options as slurm.conf lines.

The mapping key -> option is the option table's alone (:attr:`Option.slurm_key`, :attr:`Option.slurm_unit`,
docs/guides/slurm.md#the-keys-read): nothing here names an option.  The file is read as slurm.conf(5) (Slurm 22.05)
defines it and as Slurm's own parser (``src/common/parse_config.c``) reads it:

- ``Key=Value`` pairs, several on a line (``NodeName=n[1-4] CPUs=32``), keys case-insensitive, a value
  quoted when it holds spaces; text after an unescaped ``#`` is a comment; a line ending in an odd number
  of backslashes continues on the next one; a key given twice takes its last value (Slurm: "latest value
  used").
- ``Include`` lines are *not followed*: bftune reads the one file it is given (a diff can change only that
  one), and names the included files so that a key set there is not silently missed.
- ``SchedulerParameters`` is a comma-separated list of sub-options; its ``bf_*`` and other sub-options the
  table knows are read, the rest kept untouched when the line is rewritten.
- Durations in Slurm's time format (``7-0``, ``1-12:00``, ``2:00:00``, ``90`` minutes, ``90:30`` minutes and
  seconds), rounded up to whole minutes as ``time_str2mins`` does; ``UNLIMITED``/``INFINITE`` is refused
  (bftune has no unbounded age).  Booleans YES/NO (also TRUE/FALSE, 1/0, UP/DOWN, as Slurm).
- ``PriorityType`` absent means ``priority/basic``, Slurm's default (docs/semantics/scheduling.md#slurm):
  the multifactor keys then mean nothing and are listed among the ignored ones, as Slurm ignores them.

A bad value raises :class:`ConfigError` in one line naming ``file:line`` and the key.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.option import ConfigError, Option
from bftune.schedulers.options import OPTIONS, applies

__all__ = ["SlurmConf", "conf_diff", "fragment", "read_slurm_conf", "parse_slurm_conf", "slurm_time",
           "slurm_value", "SLURM_KEYS"]

#: The key whose value is a comma-separated list of sub-options (``bf_window=2880,bf_continue``).
SCHEDULER_PARAMETERS = "SchedulerParameters"
#: An option whose key is ``NodeName:CPUs`` is read from the node lines (every node alike), never written: the
#: machine's hardware is not a setting to change (docs/guides/slurm.md#the-keys-read).
NODE_NAME = "NodeName"
#: Slurm's default PriorityType (slurm.conf(5)); bftune's ``--scheduler slurm`` defaults to multifactor with
#: every weight 0, which orders as basic does, so only a file without the key needs it.
SLURM_DEFAULT_PRIORITY_TYPE = "priority/basic"

#: slurm.conf key (lower case; ``schedulerparameters:bf_window`` for a sub-option) -> option, from the table.
SLURM_KEYS: dict[str, Option] = {o.slurm_key.lower(): o for o in OPTIONS.values() if o.slurm_key}

#: A key=value pair as Slurm's parser matches it: a quoted value may hold spaces, an unquoted one none.
_PAIR = re.compile(r'([A-Za-z0-9_.]+)\s*([-*+/]?)=\s*(?:"([^"]*)"|(\S+))')
#: Keys that open a line of their own keys (a node's CPUs=, a partition's Nodes=): those are not the file's keys.
_LINE_KEYS = ("nodename", "partitionname", "frontendname", "nodeset", "downnodes", "switchname")
#: Keys about priority or backfill that bftune does not model (named apart from the other ignored keys).
_PRIORITY_WORDS = re.compile(r"^(priority|sched|bf_)", re.IGNORECASE)


@dataclass(frozen=True)
class _Pair:
    """One ``key=value`` of the file: where its value lies (physical line index, columns) and its logical line."""

    key: str
    value: str
    line: int  # physical line index (0-based)
    start: int  # column of the key
    end: int  # column after the value (its closing quote included)
    logical: int  # index of the logical line (continuations joined)


@dataclass
class SlurmConf:
    """What a slurm.conf says about scheduling.

    ``options``: option-table names to values as :meth:`SchedulerConfig.from_options` takes them
    (``scheduler: "slurm"`` and the keys present); ``lines``: where each option was set (``path:line``);
    ``ignored``: the other keys, as written, in file order; ``unmodelled``: keys about priority or
    backfill that bftune does not model (``PriorityWeightTRES``, ``SchedulerParameters:bf_continue``);
    ``includes``: the Include lines' files, not followed; ``nodes``/``partitions``: CPUs by node count and
    by partition, when NodeName/PartitionName lines say so.
    """

    path: str
    options: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    unmodelled: list[str] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    node_cpus: int = 0
    nodes: int = 0
    partitions: dict[str, int] = field(default_factory=dict)
    cpus_per_node: tuple[int, ...] = ()  # the distinct CPUs of the nodes, smallest first

    def config(self) -> SchedulerConfig:
        """The site's setting as a configuration (a rule between keys broken: one line naming the file)."""
        try:
            return SchedulerConfig.from_options(self.options)
        except ConfigError as exc:
            where = self.lines.get(exc.option or "", self.path)
            raise ConfigError(f"{where}: {exc}", option=exc.option, reason=exc.reason) from None

    def notes(self) -> list[str]:
        """What a command says on standard error about the file: the keys it ignored, the CPUs it declares."""
        name = Path(self.path).name
        out = []
        if self.ignored:
            out.append(f"{name}: ignored {len(self.ignored)} keys not about priority or backfill: "
                       + ", ".join(self.ignored))
        if self.unmodelled:
            out.append(f"{name}: not modelled by bftune (read, then ignored): " + ", ".join(self.unmodelled))
        if self.includes:
            out.append(f"{name}: Include not followed (a key set there is not read): " + ", ".join(self.includes))
        if self.nodes:
            parts = ", ".join(f"{p} {c}" for p, c in self.partitions.items())
            out.append(f"{name}: {self.node_cpus} CPUs on {self.nodes} nodes"
                       + (f" (partitions: {parts})" if parts else ""))
        return out


# --- reading ------------------------------------------------------------------------------------------------


def read_slurm_conf(path: str | Path) -> SlurmConf:
    """Read ``path`` (:func:`parse_slurm_conf`); an unreadable file is one line naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_slurm_conf(text, str(path))


def _strip_comment(line: str) -> str:
    """``line`` up to its first ``#`` not escaped by an odd number of backslashes (Slurm's _strip_comments)."""
    backslashes = 0
    for i, char in enumerate(line):
        if char == "#" and backslashes % 2 == 0:
            return line[:i]
        backslashes = backslashes + 1 if char == "\\" else 0
    return line


def _continues(content: str) -> bool:
    """Whether a comment-stripped line ends in an odd number of backslashes (then spaces): it continues."""
    stripped = content.rstrip()
    count = len(stripped) - len(stripped.rstrip("\\"))
    return count % 2 == 1


def _pairs(text: str) -> tuple[list[_Pair], list[tuple[int, str]]]:
    """Every key=value pair of the file with its place, and the Include lines (line index, file)."""
    pairs: list[_Pair] = []
    includes: list[tuple[int, str]] = []
    logical = 0
    continued = False
    for index, raw in enumerate(text.splitlines()):
        content = _strip_comment(raw)
        more = _continues(content)
        if more:
            content = content.rstrip()[:-1]
        if not continued and re.match(r"\s*include(\s|$)", content, re.IGNORECASE):
            words = content.split(None, 1)
            includes.append((index, words[1].strip() if len(words) > 1 else ""))
        else:
            for match in _PAIR.finditer(content):
                value = match.group(3) if match.group(3) is not None else match.group(4)
                pairs.append(_Pair(match.group(1), value.replace("\\#", "#"), index, match.start(), match.end(),
                                   logical))
        continued = more
        if not more:
            logical += 1
    return pairs, includes


def sub_options(value: str) -> list[tuple[str, str | None]]:
    """``SchedulerParameters``' sub-options in order: ``bf_window=2880,bf_continue`` -> name, value (or None)."""
    out = []
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        name, eq, sub = part.partition("=")
        out.append((name.strip(), sub.strip() if eq else None))
    return out


def parse_slurm_conf(text: str, path: str = "slurm.conf") -> SlurmConf:
    """The scheduling options a slurm.conf sets (module docstring); a bad value: one line naming file:line."""
    pairs, includes = _pairs(text)
    conf = SlurmConf(path, includes=[name for _, name in includes])
    found: dict[str, tuple[Option, str, str, str]] = {}  # option name -> option, key as written, value, where
    ignored: dict[str, None] = {}
    unmodelled: dict[str, None] = {}
    by_line: dict[int, list[_Pair]] = {}
    for pair in pairs:
        by_line.setdefault(pair.logical, []).append(pair)
        key = pair.key.lower()
        where = f"{path}:{pair.line + 1}"
        if key == SCHEDULER_PARAMETERS.lower():
            for name, value in sub_options(pair.value):
                option = SLURM_KEYS.get(f"{key}:{name.lower()}")
                if option is None:
                    unmodelled[f"{SCHEDULER_PARAMETERS}:{name}"] = None
                elif value is None:
                    raise ConfigError(f"{where}: {SCHEDULER_PARAMETERS}: {name} needs a value ({name}=N)")
                else:
                    found[option.name] = (option, f"{SCHEDULER_PARAMETERS}:{name}", value, where)
            continue
        option = SLURM_KEYS.get(key)
        if option is not None:
            found[option.name] = (option, pair.key, pair.value, where)
        elif _PRIORITY_WORDS.match(key):
            unmodelled[pair.key] = None
        elif pair is by_line[pair.logical][0] or by_line[pair.logical][0].key.lower() not in _LINE_KEYS:
            ignored[pair.key] = None  # a node's or partition's own keys (CPUs=...) are that line's, not keys
    values = {name: _value(option, key, value, where) for name, (option, key, value, where) in found.items()}
    _machine(conf, by_line)
    node = SLURM_KEYS.get(f"{NODE_NAME}:cpus".lower())
    if node is not None and len(conf.cpus_per_node) == 1:  # the job size factor's nodes (docs/guides/slurm.md)
        values[node.name] = node.parse(conf.cpus_per_node[0], f"{path}: NodeName CPUs")
        found[node.name] = (node, node.slurm_key or "", str(conf.cpus_per_node[0]), path)
    elif node is not None and conf.cpus_per_node:
        unmodelled[f"NodeName CPUs={','.join(map(str, conf.cpus_per_node))} (nodes differ: {node.name} left at "
                   f"{node.default})"] = None
    if "priority_type" not in values:
        values["priority_type"] = SLURM_DEFAULT_PRIORITY_TYPE
    options: dict[str, Any] = {"scheduler": "slurm"}
    for name, value in values.items():
        if applies(name, {**values, "scheduler": "slurm"}):
            options[name] = value
            if name in found:
                conf.lines[name] = found[name][3]
        else:  # PriorityWeightAge under priority/basic: Slurm ignores it, and so does bftune (said)
            unmodelled[f"{found[name][1]} (under {_requirement_said(name, {**values, 'scheduler': 'slurm'})})"] = None
    conf.options = options
    conf.ignored = list(ignored)
    conf.unmodelled = list(unmodelled)
    return conf


def _requirement_said(name: str, values: Mapping[str, Any]) -> str:
    """Which of the option's requirements the file does not meet, as slurm.conf says it."""
    for requirement in OPTIONS[name].requires:
        other = values.get(requirement.name, OPTIONS[requirement.name].default)
        if not requirement.holds(other):
            key = OPTIONS[requirement.name].slurm_key or requirement.name
            return f"{key}={other}"
    return "another setting"


def slurm_time(text: str, where: str) -> float:
    """Seconds of a Slurm time string, rounded up to whole minutes as Slurm's ``time_str2mins``.

    ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``,
    ``days-hours:minutes:seconds`` (``src/common/parse_time.c``, Slurm 22.05).
    """
    raw = text.strip()
    if raw.upper() in ("UNLIMITED", "INFINITE", "-1"):
        raise ConfigError(f"{where}: {raw}: bftune takes a finite time (7-0, 1-12:00, 30 minutes)")
    match = re.fullmatch(r"(?:(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?|(\d+)(?::(\d+)(?::(\d+))?)?)", raw)
    if match is None:
        raise ConfigError(f"{where}: cannot read {raw!r} as a Slurm time (minutes, days-hours, days-hours:minutes, "
                          "hours:minutes:seconds)")
    d, h, m, s, a, b, c = (int(g) if g is not None else 0 for g in match.groups())
    if match.group(1) is not None:  # days-hours[:minutes[:seconds]]
        seconds = d * 86400 + h * 3600 + m * 60 + s
    elif match.group(7) is not None:  # hours:minutes:seconds
        seconds = a * 3600 + b * 60 + c
    else:  # minutes[:seconds]
        seconds = a * 60 + b
    return float(-(-seconds // 60) * 60)


def _value(option: Option, key: str, value: str, where: str) -> Any:
    """The value as the option's parser takes it (bftune's units), checked by that parser."""
    said = f"{where}: {key}"
    unit = option.slurm_unit
    raw = value.strip()
    if unit in ("integer", "seconds", "minutes"):
        if not re.fullmatch(r"\d+", raw):
            raise ConfigError(f"{said}: expected a whole number{'' if unit == 'integer' else ' of ' + unit}, "
                              f"got {raw!r}")
        given: Any = int(raw) * 60 if unit == "minutes" else int(raw)
    elif unit == "duration":
        given = slurm_time(raw, said)
    elif unit == "yesno":
        lowered = raw.lower()
        if lowered not in ("yes", "no", "true", "false", "1", "0", "up", "down"):
            raise ConfigError(f"{said}: expected YES or NO, got {raw!r}")
        given = lowered in ("yes", "true", "1", "up")
    elif unit == "choice":
        given = raw.lower()
    else:  # flags
        given = raw
    return option.parse(given, said)


def expand_hostlist(text: str) -> list[str]:
    """The node names of a Slurm hostlist (one bracket range per name: ``n[01-04,07]``, ``a,b``)."""
    names: list[str] = []
    for match in re.finditer(r"[^,\[]*(?:\[[^\]]*\])?[^,]*", text):
        part = match.group(0)
        if not part:
            continue
        head, _, rest = part.partition("[")
        if not rest:
            names.append(part)
            continue
        ranges, _, tail = rest.partition("]")
        for piece in ranges.split(","):
            low, dash, high = piece.partition("-")
            if dash and low.isdigit() and high.isdigit():
                width = len(low)
                names += [f"{head}{i:0{width}d}{tail}" for i in range(int(low), int(high) + 1)]
            else:
                names.append(f"{head}{piece}{tail}")
    return names


def _node_cpus(keys: Mapping[str, str]) -> int:
    """A node's CPUs: ``CPUs``, else sockets x cores x threads (boards too), else 1 (slurm.conf(5))."""
    if "cpus" in keys and keys["cpus"].isdigit():
        return int(keys["cpus"])
    product = 1
    for name in ("boards", "socketsperboard", "sockets", "corespersocket", "threadspercore"):
        if keys.get(name, "").isdigit():
            product *= int(keys[name])
    return product


def _machine(conf: SlurmConf, by_line: Mapping[int, list[_Pair]]) -> None:
    """Nodes and CPUs from NodeName lines (``NodeName=DEFAULT`` sets the next lines' defaults), partitions'
    CPUs from their Nodes= (ALL: every node)."""
    defaults: dict[str, str] = {}
    cpus: dict[str, int] = {}
    partitions: list[tuple[str, str]] = []
    for pairs in by_line.values():
        head = pairs[0]
        keys = {p.key.lower(): p.value for p in pairs[1:]}
        if head.key.lower() == "nodename":
            if head.value.upper() == "DEFAULT":
                defaults.update(keys)
                continue
            per = _node_cpus({**defaults, **keys})
            for name in expand_hostlist(head.value):
                cpus[name] = per
        elif head.key.lower() == "partitionname" and head.value.upper() != "DEFAULT":
            partitions.append((head.value, keys.get("nodes", "")))
    conf.nodes, conf.node_cpus = len(cpus), sum(cpus.values())
    conf.cpus_per_node = tuple(sorted(set(cpus.values())))
    for name, nodes in partitions:
        members = cpus if nodes.upper() == "ALL" else {n: cpus.get(n, 0) for n in expand_hostlist(nodes)}
        conf.partitions[name] = sum(members.values())


# --- writing ------------------------------------------------------------------------------------------------


def slurm_value(option: Option, value: Any) -> str:
    """``value`` (bftune's units) as slurm.conf writes the option's key."""
    unit = option.slurm_unit
    if unit == "minutes":
        return str(int(value // 60))
    if unit in ("integer", "seconds"):
        return str(int(value))
    if unit == "duration":
        return _time_text(int(value))
    if unit == "yesno":
        return "YES" if value else "NO"
    if unit == "flags":
        return ",".join(value)
    return str(value)


def _time_text(seconds: int) -> str:
    """Whole minutes in Slurm's time format: ``7-0``, ``1-12:00``, ``2:30:00``, ``45`` (minutes)."""
    minutes = seconds // 60
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days}-0" if not rest else f"{days}-{hours}:{mins:02d}"
    return f"{hours}:{mins:02d}:00" if hours else str(mins)


def _slurm_default(name: str) -> Any:
    """What Slurm takes when slurm.conf omits the option's key (the table's default, but PriorityType)."""
    return SLURM_DEFAULT_PRIORITY_TYPE if name == "priority_type" else OPTIONS[name].default


def _wanted(config: SchedulerConfig) -> dict[str, Any]:
    """The Slurm options that mean something in ``config`` (a Slurm configuration), by name."""
    if config["scheduler"] != "slurm":
        raise ConfigError(f"only a --scheduler slurm configuration can be written as slurm.conf, got "
                          f"{config.describe()}")
    values = dict(config)
    return {name: config[name] for name, option in OPTIONS.items()
            if option.slurm_key and not option.slurm_key.startswith(f"{NODE_NAME}:") and applies(name, values)}


def fragment(config: SchedulerConfig, header: Iterable[str] = ()) -> str:
    """slurm.conf lines setting every priority and backfill key of ``config`` (one SchedulerParameters line)."""
    lines = [f"# {line}" for line in header]
    subs = []
    for name, value in _wanted(config).items():
        option = OPTIONS[name]
        key = option.slurm_key or ""
        text = slurm_value(option, value)
        if ":" in key:
            subs.append(f"{key.split(':', 1)[1]}={text}")
        elif text:
            lines.append(f"{key}={text}")
    if subs:
        lines.append(f"{SCHEDULER_PARAMETERS}={','.join(subs)}")
    return "\n".join(lines) + "\n"


def conf_diff(text: str, config: SchedulerConfig, path: str = "slurm.conf", header: Iterable[str] = ()) -> str:
    """A unified diff of ``text`` (the site's slurm.conf) to ``config``: only the lines of keys that differ.

    A key the file sets is changed where it stands (its last occurrence: the one Slurm uses), the rest of its
    line kept; SchedulerParameters is rewritten keeping its other sub-options in their order; a key the file
    lacks is added at the end under ``header`` (comment lines).  Empty when the file already says ``config``.
    """
    current = parse_slurm_conf(text, path)
    have = dict(current.options)
    pairs, _ = _pairs(text)
    last: dict[str, _Pair] = {}
    for pair in pairs:
        last[pair.key.lower()] = pair
    lines = text.splitlines()
    edits: dict[int, list[tuple[int, int, str]]] = {}  # line -> (start, end, replacement)
    added: list[str] = []
    subs_changed: dict[str, str] = {}
    for name, value in _wanted(config).items():
        if have.get(name, _slurm_default(name)) == value:
            continue
        option = OPTIONS[name]
        key = option.slurm_key or ""
        text_value = slurm_value(option, value)
        if ":" in key:
            subs_changed[key.split(":", 1)[1]] = text_value
            continue
        found = last.get(key.lower())
        replacement = f"{found.key if found else key}={_quoted(text_value)}" if text_value else ""
        if found is not None:
            edits.setdefault(found.line, []).append((found.start, found.end, replacement))
        elif replacement:
            added.append(replacement)
    if subs_changed:
        params = last.get(SCHEDULER_PARAMETERS.lower())
        subs = sub_options(params.value) if params else []
        names = {n.lower(): i for i, (n, _) in enumerate(subs)}
        for name, text_value in subs_changed.items():
            if name.lower() in names:
                subs[names[name.lower()]] = (subs[names[name.lower()]][0], text_value)
            else:
                subs.append((name, text_value))
        joined = ",".join(n if v is None else f"{n}={v}" for n, v in subs)
        if params is not None:
            edits.setdefault(params.line, []).append((params.start, params.end, f"{params.key}={joined}"))
        else:
            added.append(f"{SCHEDULER_PARAMETERS}={joined}")
    new = list(lines)
    for index, changes in edits.items():
        line = new[index]
        for start, end, replacement in sorted(changes, reverse=True):
            line = line[:start] + replacement + line[end:]
        new[index] = line if line.strip() else ""
    new = [line for i, line in enumerate(new) if not (i in edits and not line.strip() and lines[i].strip())]
    if added:
        new += [f"# {h}" for h in header] + added
    if new == lines:
        return ""
    name = Path(path).name
    return "".join(difflib.unified_diff([line + "\n" for line in lines], [line + "\n" for line in new],
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def _quoted(value: str) -> str:
    return f'"{value}"' if re.search(r"\s", value) else value
