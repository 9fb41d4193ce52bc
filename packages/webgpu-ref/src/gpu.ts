/**
 * WebGPU enum values (the spec's fixed numbers), so the code does not depend on `globalThis`
 * holding the browser-style GPUBufferUsage / GPUMapMode / GPUShaderStage objects.
 */
export const BufferUsage = {
  MAP_READ: 0x0001,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
} as const;

export const MapModeRead = 0x0001;
export const ShaderStageCompute = 0x4;
