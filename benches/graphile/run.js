// Measurement 13 of docs/benchmarks.md: graphile-worker's throughput on no-op jobs, as its own
// performance test measures it (jobs queued at once with add_jobs, then drained by a runner of
// CONCURRENCY workers with its batched fetch, a local queue of BATCH jobs, and its batched
// completion). Prints {"jobs", "secs", "rate"} as JSON. The harness installs graphile-worker
// into a folder of its own (package.json here) and runs this with DATABASE_URL set; the
// graphile_worker schemas it makes are dropped by the harness afterwards.
const { run, makeWorkerUtils, Logger } = require("graphile-worker");
const quiet = new Logger(() => () => {});
async function main() {
  const connectionString = process.env.DATABASE_URL;
  const jobs = +(process.env.JOBS || 20000);
  const concurrency = +(process.env.CONCURRENCY || 16);
  const batch = +(process.env.BATCH || 100);
  const utils = await makeWorkerUtils({ connectionString, logger: quiet });
  await utils.migrate();
  await utils.withPgClient((c) => c.query("delete from graphile_worker._private_jobs"));
  await utils.withPgClient((c) =>
    c.query(
      "select graphile_worker.add_jobs(array(select row('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec from generate_series(1, $1)))",
      [jobs]
    )
  );
  const start = process.hrtime.bigint();
  const runner = await run({
    connectionString,
    concurrency,
    noHandleSignals: true,
    pollInterval: 100,
    logger: quiet,
    taskList: { noop: async () => {} },
    preset: { worker: { localQueue: { size: batch }, completeJobBatchDelay: 0 } },
  });
  for (;;) {
    const { rows } = await utils.withPgClient((c) =>
      c.query("select count(*)::int as n from graphile_worker._private_jobs")
    );
    if (rows[0].n === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  await runner.stop();
  await utils.release();
  console.log(JSON.stringify({ jobs, secs, rate: jobs / secs }));
}
main().catch((e) => { console.error(e); process.exit(1); });
