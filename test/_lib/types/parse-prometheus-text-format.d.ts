/** The parser's own shape (the package ships no types). */
declare module 'parse-prometheus-text-format' {
  type Sample = {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  };
  export default function parse(
    text: string,
  ): { name: string; help: string; type: string; metrics: Sample[] }[];
}
