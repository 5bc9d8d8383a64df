"""The one leaf walker of the document layer: (path parts, value) for every leaf, as a diff sees them."""

from __future__ import annotations

from driftcheck.snapshot.paths import format_path, leaves


def test_leaves_descend_mappings_only_in_sorted_order() -> None:
    data = {"b": {"y": [1, 2], "x": {}}, "a": 1, "c": {"d": {"e": None}}}
    assert list(leaves(data)) == [(("a",), 1), (("b", "x"), {}), (("b", "y"), [1, 2]), (("c", "d", "e"), None)]


def test_leaves_of_a_scalar_or_an_empty_mapping_is_itself_and_keys_become_text() -> None:
    assert list(leaves(3)) == [((), 3)] and list(leaves({})) == [((), {})]
    assert list(leaves({1: "x"}, ("probes",))) == [(("probes", "1"), "x")]
    assert [format_path(parts) for parts, _ in leaves({"zope.interface": {"v": 1}})] == ['["zope.interface"].v']
