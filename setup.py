"""bert_tf: Google's BERT release rebuilt on TensorFlow 2.20 / Keras 3."""

import setuptools

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
        "tensorflow~=2.20.0",
        "keras>=3.10",
        "tensorflow-text~=2.20.0",
        "google-crc32c",
        "absl-py",
        "numpy",
        "scikit-learn",
        "scipy",
        "seqeval",
    ],
    extras_require={
        "test": [
            "hypothesis",
            "pytest",
            "tf-models-official==2.20.0",
        ],
    },
)
