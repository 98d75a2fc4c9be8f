"""Multiple choice on raw text: a context packed with each of its endings,
as run_swag packs SWAG's rows, in TensorFlow ops (the export's serve_text
and BertMultipleChoice's preprocessor share it)."""
