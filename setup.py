"""bert_tf: Google's BERT release rebuilt on TensorFlow 2.20-2.21 / Keras 3."""

import setuptools

# Beam 2.77 is the version tested.
_BEAM_VERSIONS = ">=2.77,<3"

setuptools.setup(
    name="bert_tf",
    version="0.1.0",
    description=("BERT for TensorFlow 2 / Keras 3 that reads and writes the "
                 "original google-research/bert formats"),
    packages=setuptools.find_packages(include=["bert_tf", "bert_tf.*"])
    + ["bert_tf.vocab_files"],
    # vocab/ is read through importlib.resources, installed or editable.
    package_dir={"bert_tf.vocab_files": "vocab"},
    package_data={"bert_tf.vocab_files": ["*.txt", "*.json"]},
    python_requires=">=3.10",
    install_requires=[
        # 2.20 and 2.21: each TensorFlow Text release requires its own
        # TensorFlow minor version, so pip installs a matching pair.
        "tensorflow>=2.20,<2.22",
        "tensorflow-text>=2.20,<2.22",
        # TensorFlow 2.21 no longer installs it; tf.summary.scalar needs it.
        "tensorboard>=2.20",
        "keras>=3.10,<4",
        "google-crc32c",
        # Hugging Face weights, through its numpy API (never torch), and
        # numpy's bfloat16 for those stored in it (TensorFlow requires it too).
        "safetensors",
        "ml_dtypes",
        "absl-py",
        "numpy",
        "scikit-learn",
        "scipy",
        "seqeval",
    ],
    extras_require={
        # create_pretraining_data's and extract_features' --beam_runner;
        # Dataflow also needs Beam's Google Cloud clients:
        # pip install -e ".[dataflow]".
        "beam": [f"apache-beam{_BEAM_VERSIONS}"],
        "dataflow": [f"apache-beam[gcp]{_BEAM_VERSIONS}"],
        # model.export(format="onnx") and running ONNX and LiteRT files.
        "export": ["tf2onnx", "onnxruntime", "ai-edge-litert"],
        "test": [
            f"apache-beam{_BEAM_VERSIONS}",
            "hypothesis",
            "pytest",
            "pytest-xdist",
            # Model Garden, the reference in tests and benchmarks, pins
            # TensorFlow 2.20: the test install is 2.20.
            "tf-models-official==2.20.0",
        ],
    },
)
