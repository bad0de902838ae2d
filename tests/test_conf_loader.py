from pathlib import Path

import pytest

from schedcheck.reference.framework.conf import (
    ENABLE_FLAGS,
    FLAGS_LEFT_OFF_BY_DEFAULT,
    SchedulerConf,
    default_scheduler_conf,
)
from schedcheck.scenario.conf_loader import parse_scheduler_conf
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario_text

DATA = Path(__file__).parent / "data" / "loader"

UPSTREAM_DEFAULT = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def conf(doc: object, warnings: list[str] | None = None) -> SchedulerConf:
    return parse_scheduler_conf(doc, "c.yaml", warnings)  # type: ignore[arg-type]


def error(doc: object) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        conf(doc)
    assert "\n" not in str(info.value)
    return info.value


def test_absent_conf_gives_the_default() -> None:
    scenario = load_scenario_text("apiVersion: schedcheck/v1\nkind: Scenario\n", "s.yaml")
    assert scenario.conf == default_scheduler_conf()
    assert scenario.conf.is_default
    null_conf = load_scenario_text("apiVersion: schedcheck/v1\nkind: Scenario\nschedulerConf: null\n", "s.yaml")
    assert null_conf.conf.is_default


def test_upstream_default_text_parses_to_the_default() -> None:
    parsed = conf(UPSTREAM_DEFAULT)
    expected = default_scheduler_conf()
    assert not parsed.is_default
    assert (parsed.actions, parsed.tiers, parsed.configurations) == (
        expected.actions,
        expected.tiers,
        expected.configurations,
    )


def test_actions_are_split_and_trimmed() -> None:
    assert conf({"actions": " enqueue ,allocate,  backfill,preempt , reclaim"}).actions == [
        "enqueue",
        "allocate",
        "backfill",
        "preempt",
        "reclaim",
    ]
    assert conf({"actions": "allocate, allocate"}).actions == ["allocate", "allocate"]


def test_unset_flags_default_on_except_two() -> None:
    option = conf({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}]}).tiers[0].plugins[0]
    for key in ENABLE_FLAGS:
        if key in FLAGS_LEFT_OFF_BY_DEFAULT:
            assert option.flags.get(key) is None and not option.enabled(key)
        else:
            assert option.flags[key] is True
    assert FLAGS_LEFT_OFF_BY_DEFAULT == {"enableHierarchy", "enabledClusterOrder"}


def test_written_flags_are_kept() -> None:
    doc = {
        "actions": "allocate",
        "tiers": [
            {
                "plugins": [
                    {
                        "name": "drf",
                        "enableJobOrder": False,
                        "enableHierarchy": True,
                        "enabledClusterOrder": False,
                        "enabledVictim": None,
                    }
                ]
            }
        ],
    }
    option = conf(doc).tiers[0].plugins[0]
    assert option.flags["enableJobOrder"] is False
    assert option.flags["enableHierarchy"] is True
    assert option.flags["enabledClusterOrder"] is False
    assert option.flags["enabledVictim"] is True  # null is unset


def test_yaml_11_booleans_are_booleans() -> None:
    text = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobReady: no\n    enableJobOrder: on\n"
    option = conf(text).tiers[0].plugins[0]
    assert option.flags["enableJobReady"] is False and option.flags["enableJobOrder"] is True


def test_non_boolean_flag_names_the_field() -> None:
    text = (
        'actions: allocate\ntiers:\n- plugins: [{name: gang}]\n- plugins:\n  - name: drf\n    enableJobOrder: "yes"\n'
    )
    err = error(text)
    assert str(err) == 'c.yaml: schedulerConf: tiers[1].plugins[0].enableJobOrder: expected true or false, got "yes"'
    assert (err.file, err.obj, err.field) == ("c.yaml", "schedulerConf", "tiers[1].plugins[0].enableJobOrder")
    assert error({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "enableJobReady": 1}]}]}).field == (
        "tiers[0].plugins[0].enableJobReady"
    )


def test_missing_tiers_means_no_plugins() -> None:
    parsed = conf({"actions": "allocate"})
    assert parsed.tiers == [] and parsed.actions == ["allocate"]
    assert conf({"actions": "allocate", "tiers": [{"plugins": None}]}).tiers[0].plugins == []


@pytest.mark.parametrize(
    "doc, reason",
    [
        ({"tiers": []}, "missing"),
        ({}, "missing"),
        (None, "missing"),
        ("", "missing"),
        ({"actions": ""}, "empty action name"),
        ({"actions": "allocate,"}, "empty action name"),
        ({"actions": "allocate, fly"}, 'unknown action "fly"'),
        ({"actions": ["allocate"]}, "expected a comma-separated string"),
        ({"actions": 3}, "expected a comma-separated string"),
    ],
)
def test_bad_actions(doc: object, reason: str) -> None:
    err = error(doc)
    assert err.field == "actions"
    assert reason in err.reason


def test_unknown_plugin_is_an_error_with_a_hint() -> None:
    err = error({"actions": "allocate", "tiers": [{"plugins": [{"name": "gangs"}]}]})
    assert err.field == "tiers[0].plugins[0].name"
    assert 'unknown plugin "gangs"' in err.reason and "did you mean gang?" in err.reason


@pytest.mark.parametrize(
    "doc, field",
    [
        ({"actions": "allocate", "tiers": {"plugins": []}}, "tiers"),
        ({"actions": "allocate", "tiers": ["gang"]}, "tiers[0]"),
        ({"actions": "allocate", "tiers": [{"plugins": "gang"}]}, "tiers[0].plugins"),
        ({"actions": "allocate", "tiers": [{"plugins": ["gang"]}]}, "tiers[0].plugins[0]"),
        ({"actions": "allocate", "tiers": [{"plugins": [{"arguments": {}}]}]}, "tiers[0].plugins[0].name"),
        (
            {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "arguments": [1]}]}]},
            "tiers[0].plugins[0].arguments",
        ),
        ({"actions": "allocate", "configurations": {"name": "allocate"}}, "configurations"),
        ({"actions": "allocate", "configurations": [{"arguments": {}}]}, "configurations[0].name"),
        (
            {"actions": "allocate", "configurations": [{"name": "allocate", "arguments": "x"}]},
            "configurations[0].arguments",
        ),
        (["actions"], ""),
    ],
)
def test_wrong_types(doc: object, field: str) -> None:
    assert error(doc).field == field


def test_hierarchical_drf_with_proportion_in_one_tier_is_rejected() -> None:
    tier = {"plugins": [{"name": "drf", "enableHierarchy": True}, {"name": "proportion"}]}
    err = error({"actions": "allocate", "tiers": [tier]})
    assert err.field == "tiers[0]" and "conflict" in err.reason
    # in different tiers, or without the hierarchy flag, it is fine
    conf({"actions": "allocate", "tiers": [{"plugins": tier["plugins"][:1]}, {"plugins": tier["plugins"][1:]}]})
    conf({"actions": "allocate", "tiers": [{"plugins": [{"name": "drf"}, {"name": "proportion"}]}]})


def test_a_conf_built_directly_skips_the_loaders_check_and_defaults() -> None:
    # builtDirectly: a unit test's conf, handed to OpenSession as Go values (uthelper's RegisterSession)
    tier = {"plugins": [{"name": "drf", "enableHierarchy": True, "enableJobOrder": True}, {"name": "proportion"}]}
    got = conf({"actions": "allocate", "builtDirectly": True, "tiers": [tier]})
    assert got.built_directly
    drf, proportion = got.tiers[0].plugins
    assert drf.enabled("enableHierarchy") and drf.enabled("enableJobOrder")
    assert not drf.enabled("enableQueueOrder") and not any(proportion.enabled(k) for k in ENABLE_FLAGS)
    assert not conf({"actions": "allocate", "builtDirectly": False, "tiers": [{"plugins": [{"name": "drf"}]}]}
                    ).built_directly
    err = error({"actions": "allocate", "builtDirectly": "yes", "tiers": []})
    assert err.field == "builtDirectly" and "true or false" in err.reason
    # without it, the loader's refusal names the switch
    assert "builtDirectly: true" in error({"actions": "allocate", "tiers": [tier]}).reason


def test_unknown_keys_warn() -> None:
    warnings: list[str] = []
    doc = {
        "actions": "allocate",
        "tiers": [{"plugins": [{"name": "gang", "enabledJobOrder": True, "colour": "red"}], "weight": 1}],
        "metrics": {"type": "prometheus"},
        "extra": 1,
    }
    parsed = conf(doc, warnings)
    assert parsed.tiers[0].plugins[0].flags["enableJobOrder"] is True  # the misspelt flag did nothing
    assert any(
        "tiers[0].plugins[0]: ignored unknown key enabledJobOrder (did you mean enableJobOrder?)" in w for w in warnings
    )
    assert any("ignored unknown key colour" in w for w in warnings)
    assert any("tiers[0]: ignored unknown key weight" in w for w in warnings)
    assert any("ignored unknown key extra" in w for w in warnings)
    assert not any("metrics" in w for w in warnings)
    conf(doc)  # without a list the warnings are dropped


def test_arguments_and_configurations() -> None:
    warnings: list[str] = []
    parsed = conf(
        {
            "actions": "allocate, preempt",
            "tiers": [
                {
                    "plugins": [
                        {"name": "nodeorder", "arguments": {"leastrequested.weight": 2}},
                        {"name": "binpack", "arguments": None},
                    ]
                }
            ],
            "configurations": [
                {"name": "preempt", "arguments": {"enableTopologyAwarePreemption": True}},
                {"name": "preempt", "arguments": {"ignored": 1}},
                {"name": "allocate"},
                {"name": "teleport", "arguments": {"x": 1}},
            ],
        },
        warnings,
    )
    assert parsed.plugin("nodeorder").arguments == {"leastrequested.weight": 2}
    assert parsed.plugin("binpack").arguments == {}
    assert parsed.action_arguments("preempt") == {"enableTopologyAwarePreemption": True}
    assert parsed.action_arguments("allocate") == {}
    assert parsed.action_arguments("backfill") == {}
    assert any("only the first" in w for w in warnings)
    assert any('"teleport" is no action' in w for w in warnings)


def test_conf_as_string_and_its_syntax_errors() -> None:
    parsed = conf('actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n')
    assert parsed.actions == ["allocate"] and parsed.tiers[0].plugins[0].name == "gang"
    err = error("actions: allocate\ntiers:\n- plugins: [\n")
    assert err.obj == "schedulerConf" and err.field.startswith("line ") and "invalid YAML" in err.reason
    assert "expected one YAML document" in error("actions: allocate\n---\nactions: allocate\n").reason
    assert "duplicate key" in error("actions: allocate\nactions: enqueue\n").reason


def test_conf_in_a_configmap() -> None:
    parsed = conf((DATA / "configmap.yaml").read_text())
    assert parsed.actions == ["enqueue", "allocate"]
    assert [p.name for p in parsed.tiers[0].plugins] == ["priority"]
    assert error({"kind": "ConfigMap", "data": {"a": "x", "b": "y"}}).field == "data"
    assert error({"kind": "ConfigMap", "data": {"volcano-scheduler.conf": 3}}).field == "data.volcano-scheduler.conf"
