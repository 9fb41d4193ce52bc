import { BackendUnavailableError } from "@switchyard/core";
import { openAdapterAndDevice } from "./adapter.js";

/** The one WebGPU device this process shares between sessions, with what we learnt about it. */
export interface DeviceHandle {
  /** The object `create()` returned: it must stay referenced while the device lives (Dawn frees its instance otherwise). */
  readonly gpu: GPU;
  readonly adapter: GPUAdapter;
  readonly device: GPUDevice;
  /** e.g. "llvmpipe (LLVM 19.1.7, 256 bits) / vulkan". */
  readonly description: string;
  /** Set once the device is lost; every later call fails with it. */
  lost: string | null;
  /** The last error no error scope caught (should never happen; reported by the next call). */
  uncaptured: string | null;
  /** Per-device caches (pipelines, layouts) owned by shaders.ts. */
  readonly cache: Map<string, unknown>;
}

let pending: Promise<DeviceHandle> | null = null;

async function open(): Promise<DeviceHandle> {
  let mod: { create(options: string[]): GPU };
  try {
    mod = (await import("webgpu")) as unknown as { create(options: string[]): GPU };
  } catch (e) {
    throw new BackendUnavailableError(
      "webgpu",
      `the npm package "webgpu" (Dawn's Node bindings) failed to load: ${(e as Error).message}; ` +
        `run \`npm ci\`, and check that its dist/ has a build for ${process.platform}-${process.arch}`,
    );
  }
  const gpu = mod.create([]);
  const { adapter, device } = await openAdapterAndDevice(gpu);
  const info = adapter.info;
  const handle: DeviceHandle = {
    gpu,
    adapter,
    device,
    description: [info?.description || info?.device || info?.vendor || "unknown adapter", info?.architecture]
      .filter(Boolean)
      .join(" / "),
    lost: null,
    uncaptured: null,
    cache: new Map(),
  };
  device.lost.then((l) => {
    handle.lost = `device lost (${l.reason}): ${l.message || "no message"}`;
    if (pending && handle === current) pending = null;
  });
  device.onuncapturederror = (ev) => {
    handle.uncaptured = (ev as GPUUncapturedErrorEvent).error.message;
  };
  current = handle;
  return handle;
}

let current: DeviceHandle | null = null;

/** The shared device, opened on first use; a lost device is replaced on the next call. */
export function acquireDevice(): Promise<DeviceHandle> {
  if (!pending) {
    pending = open();
    pending.catch(() => {
      pending = null;
    });
  }
  return pending;
}

/** null when a device can be had, else why not and what to do. Never throws. */
export async function deviceUnavailableReason(): Promise<string | null> {
  try {
    await acquireDevice();
    return null;
  } catch (e) {
    return e instanceof BackendUnavailableError ? e.reason : `unexpected error opening WebGPU: ${String(e)}`;
  }
}
