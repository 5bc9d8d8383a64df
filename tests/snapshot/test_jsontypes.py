"""The JSON types' narrowing helpers: what a reader gets for a member that is absent, null or of another shape."""

from __future__ import annotations

import json

import pytest

from driftcheck.snapshot.jsontypes import JSONObject, list_or_empty, member_object, object_or_empty, value_at

DOCUMENT: JSONObject = json.loads('{"probes": {"env": {"data": {"vars": {"HOME": "/root"}}}, "gpu": null},'
                                  ' "tags": ["a", "b"], "count": 3}')


def test_object_or_empty_keeps_an_object_and_empties_anything_else() -> None:
    probes = DOCUMENT["probes"]
    assert object_or_empty(probes) is probes
    assert [object_or_empty(value) for value in (None, 3, "text", ["a"])] == [{}, {}, {}, {}]


def test_list_or_empty_keeps_a_list_and_empties_anything_else() -> None:
    tags = DOCUMENT["tags"]
    assert list_or_empty(tags) is tags
    assert [list_or_empty(value) for value in (None, 3, "ab", {"a": 1})] == [[], [], [], []]


def test_value_at_descends_objects_and_is_none_where_the_path_breaks() -> None:
    assert value_at(DOCUMENT, "probes", "env", "data", "vars", "HOME") == "/root"
    assert value_at(DOCUMENT, "probes", "gpu") is None
    assert value_at(DOCUMENT, "probes", "gpu", "data") is None  # through null
    assert value_at(DOCUMENT, "tags", "0") is None  # a list is not descended
    assert value_at(DOCUMENT, "probes", "missing", "data") is None
    assert value_at(DOCUMENT) is DOCUMENT


def test_member_object_gives_the_built_object_and_refuses_another_shape() -> None:
    record: JSONObject = {"power": {"draw_w": None}, "name": "H100"}
    member_object(record, "power")["draw_w"] = 300.0
    assert record["power"] == {"draw_w": 300.0}
    with pytest.raises(TypeError, match="'name' holds str, not an object"):
        member_object(record, "name")
