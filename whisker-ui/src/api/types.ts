// The whisker-backend REST contract (whisker-backend/API.md), as TypeScript types.

export type Action = 'Allow' | 'Deny' | 'Pass';
export type Reporter = 'Src' | 'Dst';

export interface Policy {
  kind: string;
  name: string;
  namespace: string;
  tier: string;
  action: string;
  policy_index: number;
  rule_index: number;
  trigger: Policy | null;
}

export interface FlowResponse {
  id: string;
  start_time: string;
  end_time: string;
  action: Action;
  source_name: string;
  source_namespace: string;
  source_type: string;
  source_labels: string[];
  dest_name: string;
  dest_namespace: string;
  dest_type: string;
  dest_labels: string[];
  dest_service_name: string;
  dest_service_namespace: string;
  dest_service_port_name: string;
  dest_service_port: number;
  protocol: string;
  dest_port: number;
  reporter: Reporter;
  policies: { enforced: Policy[]; pending: Policy[] };
  packets_in: number;
  packets_out: number;
  bytes_in: number;
  bytes_out: number;
  num_connections_started: number;
  num_connections_completed: number;
  num_connections_live: number;
  source_ips: string[];
  dest_ips: string[];
  /** Felix found the connection in conntrack when it started (counters since it began, trace derived). */
  partial: boolean;
}

export interface Page<T> {
  meta: { totalResults: number; totalPages: number };
  items: T[];
}

export interface HintItem {
  value: string;
}

export interface PolicyStat {
  policy: Policy;
  direction: string;
  group_by: string;
  type: string;
  allowed_in: number[];
  allowed_out: number[];
  denied_in: number[];
  denied_out: number[];
  passed_in: number[];
  passed_out: number[];
  x: string[];
}

export interface ErrorBody {
  status: number;
  error: string;
  message: string;
  parameter?: string;
}
