export const USAGE = `switchyard: expert-parallel dispatch / combine for Mixture-of-Experts

usage:
  switchyard conformance [--backend <name|module>] [options]
      Runs the conformance suite against a backend and prints a table of properties.
      --backend B           reference (default), webgpu, cuda, or a module path / package name
                            (found from the current folder) whose export \`backend\` is a Backend
                            or \`createBackend()\` returns one; cuda:V runs the cuda backend's
                            variant V (exact, no-pointer-checks, blocks-1, 2-per-gpu,
                            kernel-per-half); the cuda backend takes SWITCHYARD_CUDA_OUTPUT,
                            SWITCHYARD_CUDA_RANKS_PER_GPU, SWITCHYARD_CUDA_POINTER_CHECKS,
                            SWITCHYARD_CONTIGUOUS_BLOCKS, SWITCHYARD_CUDA_KERNEL_PER_HALF and
                            SWITCHYARD_TRANSPORT from the environment, here only
      --runs N              cases per property (default 15; 150 with --deep)
      --deep                bigger configs, more steps, more runs
      --seed S              fast-check seed (a failure prints the one to replay it with)
      --path P              fast-check replay path of a failure (with --only and --seed)
      --only NAMES          comma-separated names, prefixes (dispatch) or globs (input/*)
      --json FILE           also write the report as JSON
      --no-shrink           stop at the first failing case instead of shrinking it
      --timeout-ms N        SessionOptions.timeoutMs for the backend (default 10000)
      --allow-unavailable   exit 0 when the backend cannot run here (all properties skipped)
      --list                list the properties and exit
      exit status: 0 passed, 1 a property failed, 2 bad usage (checked before anything runs),
      a backend that cannot be loaded, declares bad capabilities or is unavailable here,
      130 / 143 interrupted by SIGINT / SIGTERM (after printing and writing what finished)
  switchyard demo [...]     one MoE step on a backend, checked against the reference
                            (\`switchyard demo --help\` for its flags)
  switchyard bench [...]    latency / bandwidth tables (from @switchyard/cuda-rig)
  switchyard --version      the version
  switchyard --help         this text
`;
