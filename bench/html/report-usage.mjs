// Preloaded into a measured process (node --import): on exit, writes its own time since
// process start, its CPU time (user + system) and its peak resident memory to the file named
// by RL_BENCH_REPORT.
import { writeFileSync } from 'node:fs';

const file = process.env.RL_BENCH_REPORT;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({ ms: performance.now(), cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssKiB: usage.maxRSS }),
    );
  });
}
