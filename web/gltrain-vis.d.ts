// Types of gltrain/vis (gltrain-vis.js): live training charts on uPlot, a confusion
// matrix and a model summary table.
import type { StepEvent, EpochEvent, LayerSummary } from './gltrain.js';

export interface EvaluationPoint { step: number; accuracy: number | null }
export interface FitCallbacks {
  onStep?: (event: StepEvent) => void;
  onEpoch?: (event: EpochEvent) => void;
  onEvaluate?: (event: EvaluationPoint) => void;
}
export interface LossChart extends FitCallbacks {
  /** The uPlot instance. */
  readonly chart: unknown;
  /** step, loss, moving average, second series (e.g. a test loss). */
  readonly data: (number | null)[][];
  /** The y axis's labels as last drawn (log scale). */
  readonly axisLabels: string[];
  onStep(event: StepEvent): void;
  addPoint(step: number, loss: number | null, second: number | null): void;
  showRaw(show: boolean): void;
  reset(): void;
  redrawNow(): void;
}
export interface MetricChart extends FitCallbacks {
  readonly chart: unknown;
  readonly data: (number | null)[][];
  onEvaluate(event: EvaluationPoint): void;
  onEpoch(event: EpochEvent): void;
  reset(): void;
  redrawNow(): void;
}
export declare function logLabel(value: number | null): string;
export declare function lossChart(el: HTMLElement, options?: { log?: boolean; smoothing?: number; height?: number; legend?: boolean; secondLabel?: string }): LossChart;
export declare function metricChart(el: HTMLElement, options?: { height?: number; min?: number; validationLabel?: string; trainingLabel?: string }): MetricChart;
export declare function fitCallbacks(...parts: (FitCallbacks | null | undefined)[]): FitCallbacks;
/** Counts as matrix[true class][predicted class]. */
export declare function confusionMatrix(el: HTMLElement, predicted: ArrayLike<number>, labels: ArrayLike<number>, classNames?: readonly string[]): number[][];
/** Returns the total number of parameters. */
export declare function modelSummary(el: HTMLElement, summary: readonly LayerSummary[]): number;
