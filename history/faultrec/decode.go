package faultrec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownOp is the error of Decode for an op of no family in the
// table: it has no record type, and a reader shows its value as it is.
var ErrUnknownOp = errors.New("no fault record type for this op")

// Decode reads the value raw of the nemesis op f into its record: a
// Failure when f is "start-<x>" or "stop-<x>" and raw is an object with
// an "error" key (a failed transition, whatever the family), else the
// type of f's family and phase (see Families). It fails, saying why,
// when raw is empty or not of that shape; for an op of no family it
// returns an error wrapping ErrUnknownOp.
func Decode(f string, raw json.RawMessage) (Value, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%s: no value", f)
	}
	if (strings.HasPrefix(f, "start-") || strings.HasPrefix(f, "stop-")) && hasError(raw) {
		return decodeAs[Failure](f, raw)
	}
	if f == OpHeal {
		return decodeAs[Heal](f, raw)
	}
	fam, phase, ok := OpFamily(f)
	if !ok {
		return nil, fmt.Errorf("%s: %w", f, ErrUnknownOp)
	}
	switch fam.Name {
	case NameKill, NamePause:
		return decodeAs[Process](f, raw)
	case NameClock:
		return decodeAs[Clock](f, raw)
	case NamePartition:
		return decodeAs[Partition](f, raw)
	case NamePacket:
		return decodeAs[Packet](f, raw)
	case NamePowerLoss:
		return decodeAs[PowerLoss](f, raw)
	case NameCorrupt:
		return decodeAs[Corrupt](f, raw)
	case NameDiskFull, NameEIO:
		return decodeAs[DiskErrors](f, raw)
	case NameMember:
		return decodeAs[Member](f, raw)
	}
	if fam.Target == TargetRoles {
		return decodeAs[Targeted](f, raw)
	}
	return nil, fmt.Errorf("%s (%s, phase %d): %w", f, fam.Name, phase, ErrUnknownOp)
}

// decodeAs unmarshals raw into a T, which must be a JSON object.
func decodeAs[T Value](f string, raw json.RawMessage) (Value, error) {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%s: the value %s is no object", f, trim(raw))
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	return v, nil
}

// hasError reports whether raw is an object with an "error" key.
func hasError(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	_, ok := fields["error"]
	return ok
}

// trim cuts a value to a length an error message can carry.
func trim(raw json.RawMessage) string {
	if len(raw) > 60 {
		return string(raw[:57]) + "..."
	}
	return string(raw)
}
