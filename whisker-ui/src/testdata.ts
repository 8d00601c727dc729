// Flow fixtures for unit tests.
import type { FlowResponse } from './api/types';

export function flow(over: Partial<FlowResponse>): FlowResponse {
  return {
    id: '1', start_time: '2026-12-01T18:20:00Z', end_time: '2026-12-01T18:20:15Z', action: 'Allow',
    source_name: 'client-*', source_namespace: 'demo-a', source_type: 'WorkloadEndpoint', source_labels: [],
    dest_name: 'api-*', dest_namespace: 'demo-b', dest_type: 'WorkloadEndpoint', dest_labels: [],
    dest_service_name: '', dest_service_namespace: '', dest_service_port_name: '', dest_service_port: 0,
    protocol: 'tcp', dest_port: 8080, reporter: 'Dst', policies: { enforced: [], pending: [] },
    packets_in: 1, packets_out: 1, bytes_in: 100, bytes_out: 50,
    num_connections_started: 1, num_connections_completed: 0, num_connections_live: 1,
    source_ips: [], dest_ips: [], partial: false, ...over,
  };
}
