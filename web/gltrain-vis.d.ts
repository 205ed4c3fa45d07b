// Types of gltrain/vis (gltrain-vis.js): live training charts on uPlot, a confusion
// matrix and a model summary table.
import type { StepEvent, EpochEvent, LayerSummary } from './gltrain.js';

/** An evaluation's step and accuracy, for metric charts. */
export interface EvaluationPoint { step: number; accuracy: number | null }
/** Callbacks a chart takes from fit (spread into fit's options). */
export interface FitCallbacks {
  /** Called after every step. */
  onStep?: (event: StepEvent) => void;
  /** Called after every epoch. */
  onEpoch?: (event: EpochEvent) => void;
  /** Called after each evaluation. */
  onEvaluate?: (event: EvaluationPoint) => void;
}
/** A live loss curve (log scale by default) with a moving average. */
export interface LossChart extends FitCallbacks {
  /** The uPlot instance. */
  readonly chart: unknown;
  /** step, loss, moving average, second series (e.g. a test loss). */
  readonly data: (number | null)[][];
  /** The y axis's labels as last drawn (log scale). */
  readonly axisLabels: string[];
  /** Adds the step's loss, if one was read. */
  onStep(event: StepEvent): void;
  /** Adds a point: step, loss and the second series' value. */
  addPoint(step: number, loss: number | null, second: number | null): void;
  /** Shows or hides the raw losses beside the moving average. */
  showRaw(show: boolean): void;
  /** Clears the chart. */
  reset(): void;
  /** Draws now rather than at the next animation frame. */
  redrawNow(): void;
}
/** A live accuracy chart: validation and training accuracy by step. */
export interface MetricChart extends FitCallbacks {
  /** The uPlot instance. */
  readonly chart: unknown;
  /** step, validation accuracy, training accuracy. */
  readonly data: (number | null)[][];
  /** Adds an evaluation's accuracy. */
  onEvaluate(event: EvaluationPoint): void;
  /** Adds an epoch's accuracies. */
  onEpoch(event: EpochEvent): void;
  /** Clears the chart. */
  reset(): void;
  /** Draws now rather than at the next animation frame. */
  redrawNow(): void;
}
/** A log-scale axis label for value. */
export declare function logLabel(value: number | null): string;
/** A loss chart in el; pass it to fit as callbacks. */
export declare function lossChart(el: HTMLElement, options?: { log?: boolean; smoothing?: number; height?: number; legend?: boolean; secondLabel?: string }): LossChart;
/** An accuracy chart in el; pass it to fit as callbacks. */
export declare function metricChart(el: HTMLElement, options?: { height?: number; min?: number; validationLabel?: string; trainingLabel?: string }): MetricChart;
/** Merges several charts' callbacks into one set for fit. */
export declare function fitCallbacks(...parts: (FitCallbacks | null | undefined)[]): FitCallbacks;
/** Counts as matrix[true class][predicted class]. */
export declare function confusionMatrix(el: HTMLElement, predicted: ArrayLike<number>, labels: ArrayLike<number>, classNames?: readonly string[]): number[][];
/** Returns the total number of parameters. */
export declare function modelSummary(el: HTMLElement, summary: readonly LayerSummary[]): number;
