"""The bfloat16 warning: one, where a CPU without bfloat16 units would
emulate it."""

import logging

import pytest

import bert_tf
from bert_tf.optimization import precision
from tests.support.helpers import tiny_config

SAPPHIRE_RAPIDS = "flags\t\t: fpu avx512f avx512_bf16 amx_bf16 amx_tile\n"
SKYLAKE = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_vnni\n"


def test_cpu_flags_reads_the_flags_line(tmp_path):
  (tmp_path / "cpuinfo").write_text(SKYLAKE)
  flags = precision.cpu_flags(str(tmp_path / "cpuinfo"))
  assert flags == {"fpu", "sse", "avx2", "avx512f", "avx512_vnni"}
  assert precision.bfloat16_units(flags) == []
  (tmp_path / "cpuinfo").write_text(SAPPHIRE_RAPIDS)
  assert precision.bfloat16_units(precision.cpu_flags(
      str(tmp_path / "cpuinfo"))) == ["amx_bf16", "avx512_bf16"]
  assert precision.cpu_flags(str(tmp_path / "absent")) is None


@pytest.fixture(name="emulated_warnings")
def fixture_emulated_warnings(monkeypatch, tmp_path, caplog):
  """The warnings of bert_tf models built on a CPU with `cpuinfo`."""
  def on_cpu(cpuinfo):
    (tmp_path / "cpuinfo").write_text(cpuinfo)
    reader = precision.cpu_flags
    monkeypatch.setattr(precision, "cpu_flags",
                        lambda: reader(str(tmp_path / "cpuinfo")))
    precision.warn_if_emulated.cache_clear()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=precision.__name__):
      for dtype in ("float32", "mixed_bfloat16", "bfloat16",
                    "mixed_bfloat16"):
        bert_tf.BertEncoder.built_in(dtype, tiny_config())
    return [record.getMessage() for record in caplog.records]

  yield on_cpu
  precision.warn_if_emulated.cache_clear()


def test_one_warning_where_the_cpu_has_no_bfloat16_units(emulated_warnings):
  messages = emulated_warnings(SKYLAKE)
  assert len(messages) == 1
  assert "no bfloat16 units" in messages[0]
  assert "float32 will be faster" in messages[0]


@pytest.mark.parametrize("cpuinfo", [SAPPHIRE_RAPIDS, ""])
def test_no_warning_with_the_units_or_where_the_system_does_not_say(
    emulated_warnings, cpuinfo):
  assert emulated_warnings(cpuinfo) == []
