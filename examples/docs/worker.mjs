// worker.mjs: node worker.mjs
import { JobError, runWorker } from 'taskhandle/worker';
import { shrink } from './shrink.mjs'; // your image code

const worker = runWorker({
  url: 'http://127.0.0.1:41241', // the server
  apiKey: process.env.TASKHANDLE_API_KEY, // X-API-Key; or token: Authorization: Bearer
  name: 'gpu-1', // shown in the console beside the tasks it holds
  concurrency: 4, // jobs at once; each claim asks for as many as there are free slots
  skills: {
    async resize(job) {
      const { url, width } = job.input;
      const image = await fetch(url, { signal: job.signal });
      // A 5xx may pass (the skill's retry policy, if it has one, runs it again); a 404 will not.
      const transient = image.status >= 500;
      if (!image.ok) throw new JobError(`${url} answered ${image.status}`, 'fetch', { transient });
      await job.progress({ percent: 50, message: 'resizing' });
      await job.upload({ name: 'small.png', mediaType: 'image/png', body: shrink(image.body, width) });
      return { message: `resized to ${width} px` };
    },
  },
});
process.once('SIGTERM', () => void worker.stop());
