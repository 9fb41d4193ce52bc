import type { ConformanceProperty } from "../property.js";
import { backToBack } from "./backToBack.js";
import { configFp8Hidden, configRefused } from "./badConfig.js";
import { badInputProperties } from "./badInput.js";
import { combineAccuracy } from "./combineAccuracy.js";
import { combineExactOrder } from "./combineExactOrder.js";
import { combineHomeEdges, combineHomeSlotOrder } from "./combineHomeWeights.js";
import { combineRepeatable } from "./combineRepeatable.js";
import { combineSlotOrder } from "./combineSlotOrder.js";
import { combineZeroSign } from "./combineZeroSign.js";
import { destroyed } from "./destroyed.js";
import { dispatchFp8Input, dispatchFp8Quantize, dispatchFp8ScaleFormats } from "./dispatchFp8.js";
import { dispatchLayoutContiguous, dispatchLayoutMasked } from "./dispatchLayout.js";
import { dispatchPayload } from "./dispatchPayload.js";
import { dispatchRowOrder } from "./dispatchRowOrder.js";
import { dispatchRows } from "./dispatchRows.js";
import { dpGroupOutput } from "./dpGroups.js";
import { manySteps } from "./manySteps.js";
import { missingRank } from "./missingRank.js";
import { phaseInterleaving } from "./phaseInterleaving.js";
import { phaseOrder } from "./phaseOrder.js";
import { roundTripFp8, roundTripIdentity } from "./roundTrip.js";
import { sessionLayout } from "./sessionLayout.js";
import { sessionStats } from "./stats.js";

/** Every property of the suite, in report order. Names are stable: reports and replays refer to them. */
export const PROPERTIES: readonly ConformanceProperty[] = [
  sessionLayout,
  dispatchRows,
  dispatchPayload,
  dispatchLayoutMasked,
  dispatchLayoutContiguous,
  dispatchRowOrder,
  dispatchFp8Quantize,
  dispatchFp8Input,
  dispatchFp8ScaleFormats,
  combineAccuracy,
  combineExactOrder,
  combineSlotOrder,
  combineZeroSign,
  combineRepeatable,
  combineHomeSlotOrder,
  combineHomeEdges,
  roundTripIdentity,
  roundTripFp8,
  phaseInterleaving,
  manySteps,
  backToBack,
  dpGroupOutput,
  ...badInputProperties,
  configRefused,
  configFp8Hidden,
  phaseOrder,
  destroyed,
  missingRank,
  sessionStats,
];

/** The names of every property, in report order. */
export const PROPERTY_NAMES: readonly string[] = PROPERTIES.map((p) => p.name);
