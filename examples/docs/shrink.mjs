// A stand-in for the image code of worker.mjs (sharp, ImageMagick...): it passes the image through
// as it came, so that the worker runs as docs/workers.md prints it.

/**
 * The PNG image `png` at `width` pixels wide, as a stream of bytes.
 * @param {ReadableStream<Uint8Array> | null} png the fetched image's body
 * @param {number} _width
 * @returns {ReadableStream<Uint8Array>}
 */
export const shrink = (png, _width) => png ?? new ReadableStream();
