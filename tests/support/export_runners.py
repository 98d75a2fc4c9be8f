"""Runs a model exported to ONNX or LiteRT (skipping where onnxruntime or
ai-edge-litert is not installed: pip install -e ".[export]")."""

import pytest


def run_onnx(path, inputs):
  onnxruntime = pytest.importorskip("onnxruntime")
  session = onnxruntime.InferenceSession(path)
  outputs = session.run(None, {item.name: inputs[item.name]
                               for item in session.get_inputs()})
  return dict(zip([item.name for item in session.get_outputs()], outputs))


def run_litert(path, inputs):
  interpreter = pytest.importorskip("ai_edge_litert.interpreter")
  # Builtin ops only, as on a device without the Flex delegate.
  return interpreter.Interpreter(model_path=path).get_signature_runner()(
      **inputs)


# Each format's file name and runner.
RUNNERS = {"onnx": ("model.onnx", run_onnx),
           "litert": ("model.tflite", run_litert)}
# What each format's export and runner import.
PACKAGES = {"onnx": ("tf2onnx", "onnxruntime"),
            "litert": ("ai_edge_litert.interpreter",)}
