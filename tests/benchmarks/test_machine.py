"""benchmarks/machine.py: the CPU's model name from /proc/cpuinfo's text,
and the lines every benchmark prints about the machine."""

import os

import pytest

from tests.support.helpers import PROJECT_DIR


@pytest.fixture(name="machine")
def benchmark_module(monkeypatch):
  monkeypatch.syspath_prepend(os.path.join(PROJECT_DIR, "benchmarks"))
  import machine  # pylint: disable=import-outside-toplevel
  return machine


def test_the_cpu_model_is_read_from_cpuinfo_or_is_none(machine, tmp_path):
  cpuinfo = tmp_path / "cpuinfo"
  cpuinfo.write_text("processor\t: 0\nmodel name\t: Xeon  Max \nflags\t: "
                     "avx amx_bf16\n", encoding="utf-8")
  assert machine.cpu_model(str(cpuinfo)) == "Xeon  Max"
  cpuinfo.write_text("processor\t: 0\n", encoding="utf-8")
  assert machine.cpu_model(str(cpuinfo)) is None
  assert machine.cpu_model(str(tmp_path / "missing")) is None


def test_the_description_names_the_units_and_tensorflow(machine):
  cpu, tensorflow = machine.describe()
  assert cpu.startswith("CPU: ")
  assert "bfloat16 units: " in cpu or "lists no CPU features" in cpu
  assert tensorflow.startswith("TensorFlow 2.")


def test_a_child_process_describes_the_same_machine(machine):
  """What benchmarks whose children's peak memory counts print, from a
  process that imports TensorFlow instead of theirs."""
  assert machine.described_in_child().splitlines() == machine.describe()
