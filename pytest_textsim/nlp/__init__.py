"""The metric engines: algorithmic evaluators, tokenizers, Punkt and Porter ports,
WordNet and the NLTK data they read. Nothing here imports pytest, the plugin or
the command line.

The package itself imports nothing, so that reading the NLTK data settings at
plugin start-up does not load the tokenizers; the evaluators live in
:mod:`pytest_textsim.nlp.evaluators` and :mod:`pytest_textsim.nlp.sacre`.
"""
