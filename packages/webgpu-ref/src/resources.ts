import { UnsupportedError } from "@switchyard/core";
import type { DeviceHandle } from "./device.js";
import { WebGpuError } from "./errors.js";
import { BufferUsage } from "./gpu.js";
import type { SessionPlan } from "./plan.js";
import { OPEN_TIMEOUT_MS, watchdog } from "./watchdog.js";

/**
 * A session's buffers.
 * - heaps[r]: rank r's symmetric heap, `layout.symmetricBytes`, laid out by core's computeLayout;
 *   peers' puts and signals land here.
 * - locals[r]: rank r's local buffers (`layout.localBytes`: recvX / recvScales / recvMeta, contiguous).
 * - works[r]: rank r's scratch (plan.work): its routing from dispatchSend to combineRecv, plans,
 *   the status words.
 * - sends[r] (contiguous only): rank r's input as dispatchSend left it in the inbox (quantised),
 *   kept for its continuation, which runs once every rank's counts are in.
 * - inbox, expertOut, outbox: upload and readback staging shared by all ranks (a session runs
 *   one call at a time and the queue orders them).
 * - params: the parameter block (uniform); readback: MAP_READ staging.
 */
export class Resources {
  readonly heaps: GPUBuffer[] = [];
  readonly locals: GPUBuffer[] = [];
  readonly works: GPUBuffer[] = [];
  readonly sends: GPUBuffer[] = [];
  readonly inbox: GPUBuffer;
  readonly expertOut: GPUBuffer;
  readonly outbox: GPUBuffer;
  readonly params: GPUBuffer;
  readonly readback: GPUBuffer;
  private readonly all: GPUBuffer[] = [];

  private constructor(
    private readonly device: GPUDevice,
    plan: SessionPlan,
  ) {
    const { layout, R } = plan;
    const storage = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
    for (let r = 0; r < R; r++) {
      this.heaps.push(this.make(`heap ${r}`, Math.max(256, layout.symmetricBytes), storage));
      this.locals.push(this.make(`local ${r}`, Math.max(256, layout.localBytes), storage));
      this.works.push(this.make(`work ${r}`, plan.work.bytes, storage | BufferUsage.INDIRECT));
      if (plan.config.layout === "contiguous")
        this.sends.push(this.make(`send ${r}`, plan.inbox.bytes, storage));
    }
    this.inbox = this.make("inbox", plan.inbox.bytes, storage);
    this.expertOut = this.make("expertOut", plan.expertOutBytes, storage);
    this.outbox = this.make("outbox", plan.outbox.bytes, storage);
    this.params = this.make("params", plan.params.byteLength, BufferUsage.UNIFORM | BufferUsage.COPY_DST);
    const readBytes = Math.ceil((plan.reportWords * 4 + plan.outbox.bytes) / 256) * 256;
    this.readback = this.make("readback", readBytes, BufferUsage.MAP_READ | BufferUsage.COPY_DST);
    device.queue.writeBuffer(this.params, 0, plan.params);
  }

  private make(label: string, size: number, usage: number): GPUBuffer {
    const b = this.device.createBuffer({ label, size, usage });
    this.all.push(b);
    return b;
  }

  /** Allocates everything inside error scopes: running out of memory is an UnsupportedError naming the sizes. */
  static async create(handle: DeviceHandle, plan: SessionPlan): Promise<Resources> {
    const { device } = handle;
    device.pushErrorScope("out-of-memory");
    device.pushErrorScope("validation");
    let res: Resources | null = null;
    let thrown: unknown = null;
    try {
      res = new Resources(device, plan);
    } catch (e) {
      thrown = e;
    }
    const [validation, oom] = await watchdog(
      Promise.all([device.popErrorScope(), device.popErrorScope()]),
      OPEN_TIMEOUT_MS,
      "createSession",
      "popErrorScope",
    );
    if (thrown || validation || oom) {
      res?.destroy();
      const bytes = plan.R * (plan.layout.symmetricBytes + plan.layout.localBytes + plan.work.bytes);
      if (oom) {
        throw new UnsupportedError(
          "webgpu",
          `this config: the device ran out of memory allocating ${bytes} bytes of rank buffers (${oom.message})`,
        );
      }
      throw new WebGpuError(
        "createSession",
        "validation",
        validation?.message ?? String((thrown as Error)?.message ?? thrown),
      );
    }
    return res!;
  }

  destroy(): void {
    for (const b of this.all) b.destroy();
    this.all.length = 0;
  }
}
