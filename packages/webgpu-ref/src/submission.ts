import type { DeviceHandle } from "./device.js";
import { WebGpuError } from "./errors.js";
import { BufferUsage, MapModeRead } from "./gpu.js";
import { CALL_WORDS, KERNELS, type KernelName, MAX_GROUPS, type Role, WORKGROUP_SIZE } from "./schema.js";
import type { KernelSet } from "./shaders.js";
import { watchdog } from "./watchdog.js";
import { WHOLE, type Window } from "./windows.js";

/** A storage binding: a whole buffer, or the window of it a kernel sees. */
export interface Range {
  buffer: GPUBuffer;
  offset: number;
  size: number;
}

/** The per-dispatch values of common.wgsl's `Call`. */
export interface CallValues {
  rank: number;
  peer: number;
  tokens: number;
  epoch: number;
  phase: number;
  groups: number;
  a: Window;
  b: Window;
}

export type Grid = { x: number; y: number } | { indirect: GPUBuffer; offset: number };

const WHOLE_WINDOW: Window = { base: 0, size: 0, stride: WHOLE, index: 0 };

/** A 1-D grid of `n` invocations as (x <= 65535, y) workgroups of WORKGROUP_SIZE. */
export function linearGrid(n: number): Grid {
  const groups = Math.ceil(n / WORKGROUP_SIZE);
  const x = Math.min(groups, MAX_GROUPS);
  return { x, y: x === 0 ? 0 : Math.ceil(groups / x) };
}

export function wholeRange(buffer: GPUBuffer): Range {
  return { buffer, offset: 0, size: buffer.size };
}

export function windowRange(buffer: GPUBuffer, w: Window): Range {
  return { buffer, offset: w.base, size: w.size };
}

type Op =
  | { kind: "dispatch"; kernel: KernelName; bind: Partial<Record<Role, Range>>; call: CallValues; grid: Grid }
  | { kind: "copy"; src: GPUBuffer; srcOffset: number; dst: GPUBuffer; dstOffset: number; size: number };

/** What every submission of a session shares: the device, kernels, parameter block and call ring. */
export class Engine {
  private ring: GPUBuffer;
  private ringSlots = 64;
  private readonly slotBytes: number;
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  private readonly ids = new WeakMap<GPUBuffer, number>();
  private nextId = 1;

  constructor(
    readonly handle: DeviceHandle,
    readonly kernels: KernelSet,
    readonly params: GPUBuffer,
    readonly readback: GPUBuffer,
    /** Longest wait for GPU work before a call fails (ms). */
    readonly watchdogMs: number,
  ) {
    const align = handle.device.limits.minUniformBufferOffsetAlignment;
    this.slotBytes = Math.ceil((CALL_WORDS * 4) / align) * align;
    this.ring = this.makeRing();
  }

  private makeRing(): GPUBuffer {
    return this.handle.device.createBuffer({
      label: "call ring",
      size: this.ringSlots * this.slotBytes,
      usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST,
    });
  }

  private id(b: GPUBuffer): number {
    let id = this.ids.get(b);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(b, id);
    }
    return id;
  }

  bindGroup(kernel: KernelName, bind: Partial<Record<Role, Range>>): GPUBindGroup {
    const spec = KERNELS[kernel];
    const ranges = spec.storage.map((s) => {
      const r = bind[s.role];
      if (!r) throw new Error(`webgpu backend: kernel ${kernel} needs a ${s.role} binding`);
      return r;
    });
    const key = `${kernel}|${this.id(this.ring)}|${ranges.map((r) => `${this.id(r.buffer)}:${r.offset}:${r.size}`).join("|")}`;
    let group = this.bindGroups.get(key);
    if (!group) {
      group = this.handle.device.createBindGroup({
        label: kernel,
        layout: this.kernels.layout(kernel),
        entries: [
          { binding: 0, resource: { buffer: this.params } },
          { binding: 1, resource: { buffer: this.ring, offset: 0, size: CALL_WORDS * 4 } },
          ...spec.storage.map((s, i) => ({
            binding: s.binding,
            resource: { buffer: ranges[i].buffer, offset: ranges[i].offset, size: ranges[i].size },
          })),
        ],
      });
      this.bindGroups.set(key, group);
    }
    return group;
  }

  /** Makes room for `slots` calls (a bigger ring; bind groups are made again). */
  reserve(slots: number): void {
    if (slots <= this.ringSlots) return;
    while (this.ringSlots < slots) this.ringSlots *= 2;
    this.ring.destroy();
    this.bindGroups.clear();
    this.ring = this.makeRing();
  }

  get callRing(): GPUBuffer {
    return this.ring;
  }

  get callSlotBytes(): number {
    return this.slotBytes;
  }

  destroy(): void {
    this.ring.destroy();
    this.bindGroups.clear();
  }
}

/**
 * One queue submission: dispatches (each with its own Call slot) and copies, run inside error
 * scopes so any validation, out-of-memory or internal error fails the call; optionally reads
 * buffer ranges back through the readback buffer.
 */
export class Submission {
  private readonly ops: Op[] = [];
  private readonly reads: { offset: number; size: number }[] = [];
  private readonly writes: { buffer: GPUBuffer; offset: number; data: ArrayBufferView }[] = [];
  private readTop = 0;

  constructor(
    private readonly engine: Engine,
    /** Names the call in errors, e.g. "dispatchRecv(rank 1)". */
    readonly label: string,
  ) {}

  dispatch(
    kernel: KernelName,
    bind: Partial<Record<Role, Range>>,
    call: Partial<CallValues>,
    grid: Grid,
  ): this {
    if ("x" in grid && (grid.x === 0 || grid.y === 0)) return this;
    const full: CallValues = {
      rank: 0,
      peer: 0,
      tokens: 0,
      epoch: 0,
      phase: 0,
      groups: 0,
      a: WHOLE_WINDOW,
      b: WHOLE_WINDOW,
      ...call,
    };
    this.ops.push({ kind: "dispatch", kernel, bind, call: full, grid });
    return this;
  }

  /** Uploads `data` (a multiple of 4 bytes) before the submission's work. */
  write(buffer: GPUBuffer, offset: number, data: ArrayBufferView): this {
    if (data.byteLength > 0) this.writes.push({ buffer, offset, data });
    return this;
  }

  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, size: number): this {
    if (size > 0) this.ops.push({ kind: "copy", src, srcOffset, dst, dstOffset, size });
    return this;
  }

  /** Reads `size` bytes of `src` back after the submission; returns the index of the read. */
  read(src: GPUBuffer, srcOffset: number, size: number): number {
    const bytes = Math.ceil(size / 4) * 4;
    if (this.readTop + bytes > this.engine.readback.size) {
      throw new Error(`webgpu backend: ${this.label} reads back more than the readback buffer holds`);
    }
    this.copy(src, srcOffset, this.engine.readback, this.readTop, bytes);
    this.reads.push({ offset: this.readTop, size });
    this.readTop += bytes;
    return this.reads.length - 1;
  }

  private encode(): GPUCommandBuffer {
    const { engine } = this;
    const device = engine.handle.device;
    const dispatches = this.ops.filter((o) => o.kind === "dispatch");
    engine.reserve(dispatches.length);
    const slot = engine.callSlotBytes;
    const calls = new Uint32Array((dispatches.length * slot) / 4);
    dispatches.forEach((op, i) => {
      const c = op.call;
      calls.set([c.rank, c.peer, c.tokens, c.epoch, c.phase, c.groups, 0, 0], (i * slot) / 4);
      calls.set(
        [c.a.base, c.a.stride, c.a.index, c.a.size, c.b.base, c.b.stride, c.b.index, c.b.size],
        (i * slot) / 4 + 8,
      );
    });
    if (calls.length > 0) device.queue.writeBuffer(engine.callRing, 0, calls);
    const encoder = device.createCommandEncoder({ label: this.label });
    let pass: GPUComputePassEncoder | null = null;
    let slotIndex = 0;
    for (const op of this.ops) {
      if (op.kind === "copy") {
        pass?.end();
        pass = null;
        encoder.copyBufferToBuffer(op.src, op.srcOffset, op.dst, op.dstOffset, op.size);
        continue;
      }
      pass ??= encoder.beginComputePass({ label: this.label });
      pass.setPipeline(engine.kernels.pipeline(op.kernel));
      pass.setBindGroup(0, engine.bindGroup(op.kernel, op.bind), [slotIndex * slot]);
      slotIndex++;
      if ("x" in op.grid) pass.dispatchWorkgroups(op.grid.x, op.grid.y);
      else pass.dispatchWorkgroupsIndirect(op.grid.indirect, op.grid.offset);
    }
    pass?.end();
    return encoder.finish();
  }

  /** Submits; resolves with the bytes of each `read` (copies), or throws WebGpuError. */
  async run(): Promise<Uint8Array[]> {
    const { handle } = this.engine;
    checkDevice(handle, this.label);
    const device = handle.device;
    device.pushErrorScope("internal");
    device.pushErrorScope("out-of-memory");
    device.pushErrorScope("validation");
    let thrown: unknown = null;
    try {
      for (const w of this.writes) {
        device.queue.writeBuffer(w.buffer, w.offset, w.data.buffer, w.data.byteOffset, w.data.byteLength);
      }
      device.queue.submit([this.encode()]);
    } catch (e) {
      thrown = e;
    }
    const scopes = [device.popErrorScope(), device.popErrorScope(), device.popErrorScope()];
    const kinds = ["validation", "out-of-memory", "internal"] as const;
    const errors = await watchdog(Promise.all(scopes), this.engine.watchdogMs, this.label, "popErrorScope");
    for (let i = 0; i < 3; i++) {
      const e = errors[i];
      if (e) throw new WebGpuError(this.label, kinds[i], e.message);
    }
    if (thrown) throw new WebGpuError(this.label, "validation", String((thrown as Error).message ?? thrown));
    if (this.reads.length === 0) return [];
    const rb = this.engine.readback;
    await withWatchdog(rb.mapAsync(MapModeRead, 0, this.readTop), handle, this.label, this.engine.watchdogMs);
    try {
      const mapped = rb.getMappedRange(0, this.readTop);
      return this.reads.map((r) => new Uint8Array(mapped.slice(r.offset, r.offset + r.size)));
    } finally {
      rb.unmap();
    }
  }
}

export function checkDevice(handle: DeviceHandle, label: string): void {
  if (handle.lost) throw new WebGpuError(label, "device-lost", handle.lost);
  if (handle.uncaptured) {
    const msg = handle.uncaptured;
    handle.uncaptured = null;
    throw new WebGpuError(label, "validation", `an earlier error no call caught: ${msg}`);
  }
}

async function withWatchdog<T>(p: Promise<T>, handle: DeviceHandle, label: string, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new WebGpuError(label, "timeout", `the GPU did not finish within ${ms} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([p, timeout]);
  } catch (e) {
    if (e instanceof WebGpuError) throw e;
    checkDevice(handle, label);
    throw new WebGpuError(label, "map", (e as Error).message);
  } finally {
    clearTimeout(timer);
  }
}
