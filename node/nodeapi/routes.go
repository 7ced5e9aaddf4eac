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

	// Membership: answered by the leader (a follower forwards the request),
	// once the change has committed and applied there; each answers
	// MembersResponse (POST /members: AddMemberResponse). A change the
	// membership does not allow (a name that is a member, the last voter,
	// a change while another is in flight) is a 409; an unknown {id} a 404.
	RouteMembers       = "GET /members"
	RouteAddMember     = "POST /members"              // body AddMemberRequest: add as a learner
	RoutePromoteMember = "POST /members/{id}/promote" // learner -> voter
	RouteRemoveMember  = "DELETE /members/{id}"

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

// Path is route's path for key, path-escaped: key replaces {key}, or {id}
// in the member routes (routes without either ignore it).
func Path(route, key string) string {
	_, path, _ := strings.Cut(route, " ")
	path = strings.Replace(path, "{key}", url.PathEscape(key), 1)
	return strings.Replace(path, "{id}", url.PathEscape(key), 1)
}
