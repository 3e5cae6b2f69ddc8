import { runWorker } from 'taskhandle/worker';

const worker = runWorker({
  url: process.env.TASKHANDLE_URL ?? 'http://127.0.0.1:41241',
  skills: {
    resize: async (job) => {
      await job.progress({ percent: 50, message: 'resizing' });
      await job.artifact({ name: 'size.json', parts: [{ data: { width: job.input.width } }] });
      return { message: `Resized to ${job.input.width}px` };
    },
  },
});
process.once('SIGINT', () => worker.stop());
