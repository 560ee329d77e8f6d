"""The LLM judge: the client with its retries, the prompts and reply parser, the
SQLite judgment cache, the judge evaluators, and building a judge from settings.
Nothing here imports pytest, the plugin or the command line."""
