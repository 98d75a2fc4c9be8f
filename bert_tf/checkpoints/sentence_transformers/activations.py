"""The activations sentence-transformers records: torch's class paths
as bert_tf names them, a Dense module's, and a CrossEncoder's, which
config.json (or a bert_config.json) keeps as sentence-transformers 4 and
later read it."""


# torch activations (as sentence-transformers names them in its configs) ->
# bert_tf's names (layers.activations.ACTIVATIONS; torch's GELU is the
# exact one).
ACTIVATIONS = {
    "torch.nn.modules.activation.Tanh": "tanh",
    "torch.nn.modules.linear.Identity": "linear",
    "torch.nn.modules.activation.Sigmoid": "sigmoid",
    "torch.nn.modules.activation.ReLU": "relu",
    "torch.nn.modules.activation.GELU": "gelu_exact",
}
TORCH_ACTIVATIONS = {name: path for path, name in ACTIVATIONS.items()}
# The config.json field that records a CrossEncoder's activation.
ACTIVATION_FIELD = "sentence_transformers"


def cross_encoder_activation(values, config_file):
  """The activation a Hugging Face config.json (or a bert_config.json,
  activation_fields) records for sentence-transformers' CrossEncoder
  (since version 4: "sentence_transformers": {"activation_fn": ...};
  before: "sbert_ce_default_activation_function", read only where the
  first says nothing, as sentence-transformers does), or None where it
  records none (then the folder is a plain classifier)."""
  recorded = values.get(ACTIVATION_FIELD)
  if isinstance(recorded, dict) and "activation_fn" in recorded:
    path, field = recorded["activation_fn"], \
        "sentence_transformers.activation_fn"
  else:
    path, field = values.get("sbert_ce_default_activation_function"), \
        "sbert_ce_default_activation_function"
  return None if path is None else activation_of(path, config_file, field)


def activation_fields(activation):
  """The config.json fields that record a CrossEncoder's activation
  (bert_tf's name, ACTIVATIONS) as sentence-transformers 4 and later read
  them: what keeps it in a Hugging Face folder with no
  config_sentence_transformers.json, and in a bert_config.json."""
  return {ACTIVATION_FIELD: {"activation_fn": TORCH_ACTIVATIONS[activation]}}


def activation_or_default(activation, num_labels):
  """A CrossEncoder's activation: the one its folder records, else
  sentence-transformers' default (Sigmoid for one label, else Identity)."""
  return activation or ("sigmoid" if num_labels == 1 else "linear")


def activation_of(path, where, field):
  """bert_tf's name of a torch activation class path."""
  if not isinstance(path, str) or path not in ACTIVATIONS:
    raise ValueError(
        f"{where}: {field} {path!r} is not an activation bert_tf "
        f"reproduces ({', '.join(ACTIVATIONS)})")
  return ACTIVATIONS[path]
