package workload

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"chaos/db"
	"chaos/db/described"
	"chaos/history"
)

// NewDescribedClient makes the client a described system's description
// asks for, for node n: an HTTPTemplateClient or a CommandClient.
// readConsistency ("linearizable" or "serializable") fills the
// {read_consistency} and {serializable} variables.
func NewDescribedClient(s *described.System, n db.Node, readConsistency string) (Client, error) {
	desc := s.Description()
	vars := s.Vars(n).With(described.VarReadConsistency, readConsistency,
		described.VarSerializable, strconv.FormatBool(readConsistency == "serializable"))
	if desc.Client.HTTP != nil {
		return NewHTTPTemplateClient(n.Name, s.ClientAddr(n), desc.Client.HTTP, vars), nil
	}
	c, err := NewCommandClient(n.Name, desc.Client.Command.ExpandShell(vars), desc.Dir)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// SetElementKey is the key the set workload's element v is added at, for
// clients whose store keeps each element under a key of its own.
func SetElementKey(v int64) string { return "s" + strconv.FormatInt(v, 10) }

// describedOp is the operation of client.http op performs, and the
// variables its templates get: decimal integers, and base64 of their text.
func describedOp(op Op) (string, described.Vars, error) {
	v := described.Vars{}
	set := func(name, val string) {
		v[name] = val
		v[name+"_b64"] = base64.StdEncoding.EncodeToString([]byte(val))
	}
	dec := func(i int64) string { return strconv.FormatInt(i, 10) }
	switch x := op.Value.(type) {
	case nil:
		if op.F == history.FRead && op.Key == "" {
			return described.OpSetRead, v, nil
		}
		if op.F == history.FRead {
			set(described.VarKey, op.Key)
			return described.OpRead, v, nil
		}
	case int64:
		switch op.F {
		case history.FWrite:
			set(described.VarKey, op.Key)
			set(described.VarValue, op.ValueText(x))
			return described.OpWrite, v, nil
		case history.FAdd:
			set(described.VarKey, SetElementKey(x))
			set(described.VarValue, dec(x))
			return described.OpAdd, v, nil
		}
	case [2]int64:
		if op.F == history.FCAS {
			set(described.VarKey, op.Key)
			set(described.VarFrom, dec(x[0]))
			set(described.VarTo, dec(x[1]))
			return described.OpCAS, v, nil
		}
	}
	return "", nil, fmt.Errorf("cannot perform %s with value %T (a bug in chaos)", op.F, op.Value)
}
