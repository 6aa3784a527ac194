package policy

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// ParseNginxSize reads an NGINX size, as NGINX's size directives
// (proxy_buffer_size, client_max_body_size) take it: decimal digits,
// then optionally a unit, k, m or g in either case (KiB, MiB, GiB),
// spaces around ignored; it returns the bytes. Anything else (a sign, a
// fraction, another unit, more than an int64 of bytes) is an error.
func ParseNginxSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			s = s[:n-1]
		}
	}
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, errors.New("not an NGINX size (digits, then optionally k, m or g)")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, errors.New("NGINX size out of range")
	}
	return n * mult, nil
}

// nginxSizeLib declares the validations environment's functions on NGINX
// sizes (an attache extension of the API server's environment, for
// implementations that take sizes as NGINX writes them and compare them
// in code, as NGINX Gateway Fabric its proxy buffers):
//
//	isNginxSize(string) bool: whether ParseNginxSize reads it
//	nginxSize(string) int: its bytes; an error when it is not a size
//
// as the API server's isQuantity and quantity.
var nginxSizeLib = []cel.EnvOption{
	cel.Function("isNginxSize", cel.Overload("is_nginx_size_string", []*cel.Type{cel.StringType}, cel.BoolType,
		cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			_, err := ParseNginxSize(string(s))
			return types.Bool(err == nil)
		}))),
	cel.Function("nginxSize", cel.Overload("nginx_size_string", []*cel.Type{cel.StringType}, cel.IntType,
		cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			n, err := ParseNginxSize(string(s))
			if err != nil {
				return types.NewErr("nginxSize(%q): %v", string(s), err)
			}
			return types.Int(n)
		}))),
}
