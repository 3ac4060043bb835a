import { Injectable } from '@nestjs/common';
import { PRIORITY_CLASSES, PriorityClass } from '../metrics/metric-names';
import {
  HISTORY_BUCKET_MS,
  HISTORY_BUCKETS,
  HistoryWindow,
  TrafficHistory,
} from '../request-metrics/traffic-history';
import { HistoryDto, ModelHistoryDto } from './dto/history.dto';
import { STATUS_LIMITS } from './status.service';

/** Rounded to keep the answer short: a chart needs no more. */
const rate = (x: number): number => Math.round(x * 1000) / 1000;
const share = (x: number | null): number | null => (x === null ? null : Math.round(x * 1e4) / 1e4);

/** The last 10 minutes per model, for `GET /ui/history.json` and the status page's charts. */
@Injectable()
export class HistoryService {
  constructor(private readonly history: TrafficHistory) {}

  snapshot(nowMs = Date.now()): HistoryDto {
    const names = this.history.models().sort();
    const listed = names.slice(0, STATUS_LIMITS.maxModels);
    const models: ModelHistoryDto[] = [];
    for (const name of listed) {
      const w = this.history.window(name);
      if (w) models.push(toDto(name, w));
    }
    return {
      generated_at_ms: nowMs,
      bucket_seconds: HISTORY_BUCKET_MS / 1000,
      window_seconds: (HISTORY_BUCKET_MS * HISTORY_BUCKETS) / 1000,
      models_omitted: names.length - listed.length,
      models,
    };
  }
}

function toDto(model: string, w: HistoryWindow): ModelHistoryDto {
  const rejected = {} as Record<PriorityClass, number[]>;
  for (const p of PRIORITY_CLASSES) rejected[p] = w.rejected[p].map(rate);
  return {
    model,
    t_ms: w.endsMs,
    admitted_per_second: w.admitted.map(rate),
    rejected_per_second: rejected,
    busy_worker_share: w.busyShare.map(share),
    kv_usage: w.kvUsage.map(share),
  };
}
