// Preloaded into each test file's process by scripts/test.ts: SIGUSR2 makes Node write its
// diagnostic report (open handles, each thread's stack) to TEST_REPORT_FILE, which the runner
// reads when a file times out. Set at run time: worker threads refuse the report flags in execArgv.
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

const file = process.env.TEST_REPORT_FILE;
if (isMainThread && file && process.report) {
  process.report.directory = path.dirname(file);
  process.report.filename = path.basename(file);
  process.report.signal = 'SIGUSR2';
  process.report.reportOnSignal = true;
}
