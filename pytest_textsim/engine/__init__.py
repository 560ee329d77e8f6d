"""Scoring datasets of any size: streamed rows, worker processes, cluster engines.

No pytest and no command line here: ``textsim score`` drives :mod:`.stream`,
and :func:`~pytest_textsim.engine.cluster.score_batch` is the body of a Dask,
Ray Data or Spark job.

- :mod:`.plan`: ``--metric`` specs into metric-table evaluators, and the checks
  of one input row (``file:line`` problems);
- :mod:`.chunks`: scoring one chunk of input lines, the same code in the parent
  and in every worker, so the output does not depend on the number of workers;
- :mod:`.tally`: what the summary and the gates need, kept in constant memory;
- :mod:`.pool`: worker processes with a bounded number of chunks in flight;
- :mod:`.cores`: how many cores this process may use;
- :mod:`.stream`: the loop that reads, scores and writes rows as they go;
- :mod:`.cluster`: the public batch function for cluster engines.
"""
