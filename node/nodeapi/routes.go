package nodeapi

import (
	"net/url"
	"strings"
)

// The routes, as "METHOD PATH" patterns of net/http.ServeMux: the node
// registers its handlers under them, the Client derives its requests from
// them, and callers name requests by them in errors ("POST
// /faults/partition"). {key} is the key, path-escaped.
const (
	RouteGet     = "GET /kv/{key}"      // ?stale=true: from the local store, not linearizable
	RoutePut     = "PUT /kv/{key}"      // body WriteRequest with Value
	RouteCAS     = "POST /kv/{key}/cas" // body WriteRequest with From and To
	RouteDelete  = "DELETE /kv/{key}"   // no body
	RouteStatus  = "GET /status"        // answers Status
	RouteMetrics = "GET /metrics"       // Prometheus text format

	// The fault hooks answer 403 unless the node runs with
	// --enable-fault-hooks; each answers the node's Faults after it.
	RouteFaults        = "GET /faults"
	RouteClearFaults   = "DELETE /faults"     // clock, drop list, net faults and append limit
	RouteSetClock      = "POST /faults/clock" // body ClockFault
	RouteResetClock    = "DELETE /faults/clock"
	RouteSetPartition  = "POST /faults/partition" // body PartitionRequest
	RouteHealPartition = "DELETE /faults/partition"
	RouteSetNet        = "POST /faults/net" // body NetFaults
	RouteClearNet      = "DELETE /faults/net"
	RouteSetAppend     = "POST /faults/append" // body AppendLimit
	RouteResetAppend   = "DELETE /faults/append"
)

// StaleParam is the query parameter of RouteGet that, set to "true", asks
// for a stale read.
const StaleParam = "stale"

// Method is route's method.
func Method(route string) string {
	method, _, _ := strings.Cut(route, " ")
	return method
}

// Path is route's path for key, path-escaped (routes without {key} ignore
// it).
func Path(route, key string) string {
	_, path, _ := strings.Cut(route, " ")
	return strings.Replace(path, "{key}", url.PathEscape(key), 1)
}
