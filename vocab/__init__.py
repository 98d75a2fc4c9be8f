"""Vocabularies the project builds and ships, and the manifest of Google's."""
