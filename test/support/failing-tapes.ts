/** Tape writers that fail as on a full disk (ENOSPC) once a number of frames were written. */
import { fileTapeStore, type TapeStore, type TapeWriter } from "../../src/batch/tape-store.js";

export interface TapeFaults {
  /** Frames a tape takes before its writes fail; read at each write, so a test may change it. */
  failAfter: number;
}

/** `writer`, failing its writes once `faults.failAfter` frames went through it. */
export function failingTapeWriter(writer: TapeWriter, faults: TapeFaults): TapeWriter {
  let written = 0;
  return {
    ...writer,
    write(frame) {
      if (written >= faults.failAfter)
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      written++;
      writer.write(frame);
    },
  };
}

/** A file tape store (as `ServeRuntime.tapeStore`) whose tapes fail as `failingTapeWriter`. */
export function failingTapeStore(faults: TapeFaults): (dir: string, secrets: readonly string[]) => TapeStore {
  return (dir, secrets) => {
    const store = fileTapeStore(dir, secrets);
    return {
      ...store,
      open: (id, header, replace) => failingTapeWriter(store.open(id, header, replace), faults),
    };
  };
}
