"""The LLM judge: its providers, the client with its retries, the prompts and reply
parser, the SQLite judgment cache, the judge evaluators, and building a judge from
settings. Nothing here imports pytest, the plugin or the command line.

- :mod:`.providers`: one module per API (``openai``, ``azure``, ``anthropic``):
  the SDK client, the request, the reply and its usage, advice for a 404;
- :mod:`.spec`: a checked model configuration (:class:`~.spec.ModelSpec`) and
  :func:`~.spec.scrub`, which takes its secrets out of a text;
- :mod:`.options`: :class:`~.options.JudgeOptions` (timeouts, retries,
  sampling) and how messages name the settings behind them;
- :mod:`.client`: :class:`~.client.JudgeClient`, one model's calls with
  retries, a concurrency limit, the cache and the counters;
- :mod:`.retry`: ``Retry-After`` and which statuses are retried;
- :mod:`.advice`: what an error says to try, and the setting it concerns;
- :mod:`.stats`: the run's counters (:class:`~.stats.JudgeStats`);
- :mod:`.errors`: :class:`~.errors.JudgeError` and its kinds;
- :mod:`.endpoints`, :mod:`.transport`, :mod:`.reachability`: endpoint URLs and
  their credentials, the per-attempt deadline and reply size limit, a dead
  endpoint found once for the run;
- :mod:`.judgment`: :class:`~.judgment.Judgment`, one judged sample (score, reason,
  raw reply, tokens, probabilities);
- :mod:`.replies`: reading a chat completion's body;
- :mod:`.prompts`, :mod:`.evaluators`, :mod:`.rubric`, :mod:`.calibration`: the
  judge metrics, their prompts and parser, rubrics (G-Eval) and agreement with
  human labels;
- :mod:`.embeddings`: semantic similarity through an embeddings API;
- :mod:`.cache`: the judgment, embedding and calibration cache (SQLite);
- :mod:`.hub`: one process making the judge calls of xdist workers;
- :mod:`.setup`: the run's judge built from settings.
"""
