/** The little of autocannon's API the bench uses (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    amount?: number;
    connections?: number;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
  }
  interface Result {
    requests: { average: number; total: number };
    /** Seconds. */
    duration: number;
    latency: { p50: number; p90: number; p99: number; max: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
