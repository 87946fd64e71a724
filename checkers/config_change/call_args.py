"""call-args-schema@1, @2 and @3: tool-call arguments match the tool's declared JSON Schema,
and the first recording stage at which they broke it.

@2 is @1 with its YAML inputs read with anchors and aliases expanded (bounded) instead of
refused: the same function, params and reasons (``model._reading_version``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
)
from ..arithmetic import left_sum
from ..compare import format_path
from ..plain import via_json
from .model import json_type, jsonl_records, reading_version, require_mapping, str_list

DEFAULT_STAGES = [
    "model_output",
    "platform_return",
    "local_receipt",
    "serialized_request",
    "server_receipt",
]


def _schemas(tools: Any, linear_only: bool = False) -> dict[str, Any]:
    """Each declared tool's validator, by name (``linear_only``: its patterns on RE2, a
    schema with one outside the subset not re-run)."""
    # jsonschema (about 0.1 s to import) is loaded by the first case that checks a schema
    from jsonschema import exceptions as jsonschema_exceptions
    from jsonschema import validators as jsonschema_validators

    from ..jsonschemas import check_schema, linear_validator

    declared = require_mapping(tools, "tools").get("tools")
    if not isinstance(declared, list) or not declared:
        raise CheckerInputError("input.invalid", "tools: expected a non-empty list under 'tools'")
    schemas: dict[str, Mapping[str, Any]] = {}
    for index, tool in enumerate(declared):
        tool = require_mapping(tool, f"tools[{index}]")
        name = tool.get("name")
        schema = tool.get("input_schema", tool.get("parameters"))
        if not isinstance(name, str) or not isinstance(schema, Mapping):
            raise CheckerInputError(
                "input.invalid",
                f"tools[{index}]: needs a name and an input_schema (or parameters) mapping",
            )
        if name in schemas:
            raise CheckerInputError("input.invalid", f"tools: {name!r} is declared twice")
        cls = jsonschema_validators.validator_for(schema)
        try:
            check_schema(cls, schema)
        except jsonschema_exceptions.SchemaError as exc:
            raise CheckerInputError(
                "input.invalid",
                f"tools: the schema of {name!r} is not a valid JSON Schema: {exc.message}",
            ) from None
        if linear_only:
            schemas[name] = linear_validator(schema, f"the schema of {name!r}")
        else:
            schemas[name] = cls(schema)
    return schemas


def _schema_problems(validator: Any, arguments: Any) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(code, path, details) for each violation; type errors name both types."""
    from referencing.exceptions import Unresolvable

    try:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except Unresolvable as exc:  # nothing is fetched: a remote or dangling $ref
        raise CheckerInputError(
            "input.invalid", f"tools: a $ref in a schema cannot be resolved here: {exc}"
        ) from None
    for error in errors:
        path = format_path(list(error.absolute_path))
        expected = _expected_types(error)
        if expected is not None:
            yield (
                "args.type_mismatch",
                path,
                {"expected": expected, "observed": json_type(error.instance)},
            )
        else:
            yield "args.invalid", path, {"rule": str(error.validator), "error": error.message}


def _expected_types(error: Any) -> list[str] | None:
    """The allowed types when the violation is only about type (``type``, or an
    ``anyOf``/``oneOf`` whose branches each fail on type at the same place)."""
    if error.validator == "type":
        value = error.validator_value
        return [value] if isinstance(value, str) else list(value)
    if error.validator in ("anyOf", "oneOf") and error.context:
        types: list[str] = []
        for sub in error.context:
            if sub.validator != "type" or list(sub.relative_path):
                return None
            value = sub.validator_value
            types.extend([value] if isinstance(value, str) else value)
        return types
    return None


def _call_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A call of a tool that was never declared. Never None (empty ``stages`` is
    ``params.invalid``)."""
    stages = str_list(params, "stages")
    if not stages:
        return None
    call = {"call_id": "c1", "stage": stages[0], "tool": "undeclared", "arguments": {}}
    return {
        "calls": [(1, call)],
        "tools": {"tools": [{"name": "declared", "input_schema": {"type": "object"}}]},
    }


@checker(
    "call-args-schema",
    1,
    roles=[
        Role(
            "calls",
            InputKind.JSONL,
            "recorded tool calls, one per line: {call_id, stage, tool, arguments, ...}",
        ),
        Role(
            "tools",
            InputKind.DATA,
            "the tool declarations given to the model: {tools: [{name, input_schema}]}",
        ),
    ],
    params=[
        Param(
            "stages",
            "recording stages in pipeline order (a call's record at an earlier stage comes first)",
            (list,),
            DEFAULT_STAGES,
        ),
    ],
    reasons={
        "args.type_mismatch": "an argument has a type its tool's schema does not allow "
        "(names tool, argument path, expected and observed type, first stage seen)",
        "args.invalid": "an argument breaks another rule of its tool's schema (required, "
        "enum, pattern, ...)",
        "call.unknown_tool": "a call names a tool that was not declared",
    },
    libraries=("jsonschema",),
    counterexample=_call_counterexample,
    example_params=[{}],
)
def call_args_schema(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Recorded tool-call arguments match each tool's declared JSON Schema.

    Each record is one tool call seen at one recording stage: ``call_id`` (records
    with the same id are the same call seen at several stages; the line number when
    absent), ``stage`` (one of the ``stages`` param, in pipeline order: by default
    model_output, platform_return, local_receipt, serialized_request,
    server_receipt), ``tool`` and ``arguments`` (the decoded arguments object).
    Arguments are validated with the ``jsonschema`` library against the tool's
    ``input_schema`` (or ``parameters``).

    One reason per call and argument path, at the *first* stage where the problem was
    seen, listing the stages recorded before it (where the argument was still valid)
    and those not observed at all. The seed's case: ``body`` must be an object or null
    but was already a string when the local runner received it (the ``yaml`` field
    inside the body may be a string). That locates the break before local
    serialization; it does not say why it happened, and stages with no record (model
    output, platform processing) remain unobserved.
    """
    return _check_calls(inputs, params, linear_only=False)


def _check_calls(
    inputs: Mapping[str, Any], params: Mapping[str, Any], linear_only: bool
) -> Verdict:
    """@1's and @2's check; ``linear_only`` (@3): the schemas' patterns on RE2 only."""
    stages = str_list(params, "stages")
    if not stages or len(set(stages)) != len(stages):
        raise CheckerInputError("params.invalid", "stages must be a non-empty list of unique names")
    schemas = _schemas(inputs["tools"], linear_only)
    calls = _calls(inputs["calls"], stages)
    reasons = [
        r
        for call_id, seen in calls.items()
        for r in _first_problems(call_id, seen, schemas, stages)
    ]
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} argument problem(s) in {len(calls)} recorded call(s)", reasons
        )
    checked = left_sum(len(seen) for seen in calls.values())
    return Verdict.passed(
        f"all {checked} record(s) of {len(calls)} call(s) match their tools' schemas"
    )


Seen = list[tuple[int, int, Mapping[str, Any]]]  # (stage rank, line, record) of one call


def _calls(value: Any, stages: list[str]) -> dict[str, Seen]:
    """The records by call (``call_id``, else each line its own call), in pipeline order."""
    rank = {name: index for index, name in enumerate(stages)}
    calls: dict[str, Seen] = {}
    for line, record in jsonl_records(value, "calls"):
        stage, tool = record.get("stage"), record.get("tool")
        if not isinstance(stage, str) or stage not in rank:
            raise CheckerInputError(
                "input.invalid",
                f"calls line {line}: stage {stage!r} is not one of {', '.join(stages)}",
            )
        if not isinstance(tool, str) or "arguments" not in record:
            raise CheckerInputError(
                "input.invalid", f"calls line {line}: every call needs a tool name and arguments"
            )
        call_id = str(record.get("call_id", f"line {line}"))
        calls.setdefault(call_id, []).append((rank[stage], line, record))
    for seen in calls.values():
        seen.sort(key=lambda item: (item[0], item[1]))
    return calls


def _first_problems(
    call_id: str, seen: Seen, schemas: Mapping[str, Any], stages: list[str]
) -> list[Reason]:
    """One reason per problem of one call, at the first stage it was seen, with the
    earlier stages where the arguments were valid and those with no record."""
    first: dict[tuple[str, str], tuple[str, int, dict[str, Any]]] = {}
    clean_before: dict[tuple[str, str], list[str]] = {}
    clean: list[str] = []
    for _, line, record in seen:
        stage, tool = str(record["stage"]), str(record["tool"])
        if tool not in schemas:
            key = ("call.unknown_tool", tool)
            if key not in first:
                first[key] = (stage, line, {"declared": sorted(schemas)})
                clean_before[key] = list(clean)
            continue
        found = False
        for code, path, info in _schema_problems(schemas[tool], record["arguments"]):
            found = True
            key = (code, path)
            if key not in first:
                first[key] = (stage, line, {"tool": tool, **info})
                clean_before[key] = list(clean)
        if not found:
            clean.append(stage)
    recorded = [str(r["stage"]) for _, _, r in seen]
    return [
        _call_reason(
            code,
            path,
            call_id,
            stage,
            line,
            info,
            clean_before[(code, path)],
            [s for s in stages[: stages.index(stage)] if s not in recorded],
        )
        for (code, path), (stage, line, info) in first.items()
    ]


def _call_reason(
    code: str,
    path: str,
    call_id: str,
    stage: str,
    line: int,
    info: dict[str, Any],
    clean_before: list[str],
    unobserved: list[str],
) -> Reason:
    earlier = f"valid at {', '.join(clean_before)}" if clean_before else "no valid record before it"
    blind = f"; not observed at {', '.join(unobserved)}" if unobserved else ""
    where = f"first seen at stage {stage} (line {line}; {earlier}{blind})"
    details = {
        "call_id": call_id,
        "path": path,
        "first_stage": stage,
        "line": line,
        "valid_at": clean_before,
        "unobserved_stages": unobserved,
        **info,
    }
    if code == "call.unknown_tool":
        return Reason(
            code,
            f"call {call_id}: tool {path!r} was not declared "
            f"(declared: {', '.join(info['declared'])}); {where}",
            via_json({**details, "tool": path, "path": None}),
        )
    if code == "args.type_mismatch":
        return Reason(
            code,
            f"call {call_id} ({info['tool']}): argument {path} must be "
            f"{' or '.join(info['expected'])} but was {info['observed']}; {where}",
            via_json(details),
        )
    return Reason(
        code,
        f"call {call_id} ({info['tool']}): argument {path}: {info['error']}; {where}",
        via_json(details),
    )


def _calls_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """An integer argument sent as text at the first stage: args.type_mismatch."""
    stages = params.get("stages")
    if not isinstance(stages, list) or not stages or not isinstance(stages[0], str):
        return None
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    record = {"call_id": "c1", "stage": stages[0], "tool": "t", "arguments": {"x": "1"}}
    return {"tools": {"tools": [{"name": "t", "input_schema": schema}]}, "calls": [(1, record)]}


call_args_schema_v2 = reading_version(call_args_schema, _calls_counterexample)


def _call_args_schema_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    return _check_calls(inputs, params, linear_only=True)


call_args_schema_v3 = call_args_schema_v2._replace(
    version=3,
    function=_call_args_schema_v3,
    doc=call_args_schema_v2.doc
    + "\n\nVersion 3 decides as version 2, except that the schemas' regular expressions "
    "(`pattern`, `patternProperties`, and the `additionalProperties` they decide) run on RE2 "
    "(time linear in each string): a schema holding a pattern outside the subset RE2 reads "
    "as Python's `re` (jsonschema's engine) does, one reading `patternProperties` through "
    "`unevaluatedProperties`, or a string on which the two engines could differ, is not "
    "re-run: `pattern.not_rerun`, the case inconclusive, naming the pattern and why.",
)
