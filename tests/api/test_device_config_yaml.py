"""The device ConfigMap's document decoded as upstream decodes it (reference_impl/api/devices/yaml_v2.py,
config.py): every case of tests/data/device_config_table.json (recorded with adapters/yamloracle by
tests/data/regen_device_config_table.py: gopkg.in/yaml.v2 v2.4.0) fails where yaml.v2's Unmarshal fails and
otherwise keeps the values it decoded; a refused document falls back to upstream's default config whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedcheck.reference.api.devices.config import (DEFAULT_CONFIG, DeviceConfig, DeviceConfigError,
                                                     device_config_problem, load_device_config, parse_device_config)
from schedcheck.reference.k8s import ConfigMap

TABLE = json.loads((Path(__file__).parents[1] / "data" / "device_config_table.json").read_text(encoding="utf-8"))
CASES = TABLE["cases"]


def kept(config: DeviceConfig) -> dict:
    """What the reference keeps of a decoded document, in the table's shape."""
    n = config.nvidia
    mig = [[list(m.models), [[g.group, [[t.name, t.memory, t.count] for t in g.instances]] for g in m.geometries]]
           for m in n.mig_geometries_list]
    kinds = [[k.common_word, k.chip_name, k.resource_name, k.resource_memory_name, k.memory_allocatable,
              k.memory_capacity, k.ai_core, k.ai_cpu, [[t.name, t.memory, t.ai_core, t.ai_cpu] for t in k.templates]]
             for k in config.vnpu_configs]
    return {"nvidia": [n.resource_count_name, n.resource_memory_name, n.resource_core_name,
                       n.resource_memory_percentage_name, n.device_split_count, n.gpu_memory_factor, mig],
            "vnpus": [config.vnpu_hami_core, kinds]}


def test_the_table_covers_refusals_and_yaml_v2s_lenient_readings():
    assert len(CASES) >= 800
    assert sum("error" in case for case in CASES) >= 300 and sum("kept" in case for case in CASES) >= 300


@pytest.mark.parametrize("case", CASES, ids=[repr(c["text"])[:60] for c in CASES])
def test_documents_decode_as_yaml_v2_decodes_them(case):
    if "error" in case:
        with pytest.raises(DeviceConfigError) as err:
            parse_device_config(case["text"], "kube-system/cm")
        assert "\n" not in str(err.value) and err.value.field.startswith("data.device-config.yaml")
    else:
        assert kept(parse_device_config(case["text"], "kube-system/cm")) == case["kept"]


@pytest.mark.parametrize("text, field, value", [
    ("nvidia:\n  resourceCountName: 5\n", "resource_count_name", "5"),  # any scalar's text
    ("nvidia:\n  resourceCountName: yes\n", "resource_count_name", "yes"),
    ("nvidia:\n  deviceSplitCount: 1.9\n", "device_split_count", 1),  # a float, truncated
    ("nvidia:\n  deviceSplitCount: 0x10\n", "device_split_count", 16),
    ("nvidia:\n  gpuMemoryFactor: 08\n", "gpu_memory_factor", 8),  # not octal: read as the float 8
])
def test_yaml_v2_reads_what_a_strict_reader_would_refuse(text, field, value):
    assert getattr(parse_device_config(text, "x").nvidia, field) == value


def test_a_refused_document_falls_back_to_the_default_config_whole():
    """One refused value anywhere: nothing of the document is kept, not even its valid resource names."""
    text = "nvidia:\n  resourceCountName: example.com/gpu-count\n  deviceSplitCount: ten\n"
    maps = [ConfigMap("cm", "kube-system", {"device-config.yaml": text})]
    assert load_device_config(maps, "cm", "kube-system") is DEFAULT_CONFIG
    problem = device_config_problem(maps, "cm", "kube-system")
    assert problem.field == "data.device-config.yaml.nvidia.deviceSplitCount" and "`ten` into uint" in problem.reason
    good = [ConfigMap("cm", "kube-system", {"device-config.yaml": text.replace("ten", "4")})]
    assert device_config_problem(good, "cm", "kube-system") is None
    assert load_device_config(good, "cm", "kube-system").nvidia.resource_count_name == "example.com/gpu-count"


def test_the_loader_warns_naming_the_file_the_configmap_and_the_field(tmp_path):
    from schedcheck.scenario.loader import load_scenario

    source = Path(__file__).parents[1] / "scenarios" / "deviceshare-vgpu-configmap-refused-falls-back-to-default.yaml"
    scenario = load_scenario(source)
    warned = [w for w in scenario.warnings if "ConfigMap volcano-system/gpu-config" in w]
    assert len(warned) == 1 and "\n" not in warned[0]
    assert str(source) in warned[0] and "data.device-config.yaml.nvidia.deviceSplitCount" in warned[0]
    assert "default device config" in warned[0]
    # a ConfigMap deviceshare does not read is not decoded: the usual "not read" warning only
    other = tmp_path / "other.yaml"
    other.write_text(source.read_text(encoding="utf-8").replace("name: gpu-config", "name: other-config"),
                     encoding="utf-8")
    warnings = load_scenario(other).warnings
    assert not any("deviceSplitCount" in w for w in warnings)
    assert any("ConfigMap volcano-system/other-config: not read" in w for w in warnings)
