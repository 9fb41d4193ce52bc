import { defineConfig } from "@switchyard/core";
import { acquireDevice } from "../device.js";
import { BufferUsage } from "../gpu.js";
import { planSession } from "../plan.js";
import type { KernelName } from "../schema.js";
import { kernelsFor } from "../shaders.js";
import { Engine, linearGrid, Submission, wholeRange } from "../submission.js";

type ProbeKernel = Extract<KernelName, `probe${string}`>;

/**
 * Runs one of codec_probe.wgsl's kernels over `values` (u32 each) and returns what the WGSL codec
 * made of them. For tests: it proves the device code bit-exact with core's codecs.
 */
export async function probeCodec(kernel: ProbeKernel, values: Uint32Array): Promise<Uint32Array> {
  const handle = await acquireDevice();
  const { device } = handle;
  // The parameter block's names do not depend on the config; any config gives them.
  const names = planSession(
    defineConfig({ ranks: 1, experts: 1, topK: 1, hidden: 1, maxTokensPerRank: 1 }),
    device.limits,
  ).names;
  const kernels = await kernelsFor(handle, names, "codecProbe");
  const bytes = Math.max(256, Math.ceil((values.length * 4) / 256) * 256);
  const data = device.createBuffer({
    size: bytes,
    usage: BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST,
  });
  const params = device.createBuffer({
    size: Math.ceil(names.length / 4) * 16,
    usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST,
  });
  const readback = device.createBuffer({ size: bytes, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });
  const engine = new Engine(handle, kernels, params, readback, 60_000);
  try {
    const sub = new Submission(engine, `probeCodec(${kernel})`);
    sub.write(data, 0, values);
    sub.dispatch(kernel, { data: wholeRange(data) }, { tokens: values.length }, linearGrid(values.length));
    sub.read(data, 0, values.length * 4);
    const [out] = await sub.run();
    return new Uint32Array(out.buffer, out.byteOffset, values.length).slice();
  } finally {
    engine.destroy();
    for (const b of [data, params, readback]) b.destroy();
  }
}
