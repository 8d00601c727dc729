//go:build tools

// The helm command the chart's tests and scripts run, built from its published module
// (scripts/helm.sh build); this file only pins the module.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
