#!/usr/bin/env bash
# Shows, with a real NGINX, how limit_req directives written the way NGINX
# Gateway Fabric writes a RateLimitPolicy's combine: a Gateway's policies at
# the server, a route's at its location (NGF internal/controller/nginx/
# config/policies/ratelimit/generator.go). attache's profile of NGF's
# RateLimitPolicy rests on the answer (docs/profiles.md, "RateLimitPolicy
# (gateway.nginx.org)"): a location with limit_req rules of its own does not
# inherit the server's, while limit_req_status is inherited on its own.
#
# Installs Debian's nginx-light when no nginx is on PATH (needs root). Exits
# 0 when NGINX behaves as attache models it, 1 otherwise. Not part of
# hack/test.sh: it needs a package install and a free local port.
#
# Usage: hack/nginx-limit-req-inheritance.sh [port]
set -euo pipefail

port="${1:-18080}"
if ! command -v nginx >/dev/null 2>&1; then
	apt-get install -y nginx-light >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y nginx-light >/dev/null; }
fi

dir="$(mktemp -d)"
chmod 755 "$dir" # the workers read the files as an unprivileged user
trap 'nginx -p "$dir" -c "$dir/nginx.conf" -s stop 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/logs" "$dir/www/own-rules" "$dir/www/status-only" "$dir/www/plain"
for d in own-rules status-only plain; do echo ok >"$dir/www/$d/index.html"; done

# The Gateway's policy: one request a minute, rejected with 429, at the
# server. A route's policy with a generous rule of its own, and one that
# sets only its reject code, at their locations. Content is served from
# files: "return" would answer in the rewrite phase, before limit_req runs.
cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
error_log $dir/logs/error.log;
pid $dir/nginx.pid;
events {}
http {
  access_log off;
  client_body_temp_path $dir/cb; proxy_temp_path $dir/pt; fastcgi_temp_path $dir/ft;
  uwsgi_temp_path $dir/ut; scgi_temp_path $dir/st;
  limit_req_zone \$binary_remote_addr zone=gateway:1m rate=1r/m;
  limit_req_zone \$binary_remote_addr zone=route:1m rate=1000r/s;
  server {
    listen 127.0.0.1:$port;
    root $dir/www;
    limit_req zone=gateway;
    limit_req_status 429;
    location /own-rules/ { limit_req zone=route burst=100 nodelay; limit_req_status 466; }
    location /status-only/ { limit_req_status 466; }
    location /plain/ { }
  }
}
EOF
nginx -p "$dir" -c "$dir/nginx.conf"
sleep 0.5

get() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/$1/"; }
# The first request takes the Gateway zone's one token for this client.
first="$(get plain)"
plain="$(get plain)"
own="$(get own-rules) $(get own-rules) $(get own-rules)"
status_only="$(get status-only)"
echo "location without directives:          $first then $plain (server's rule, server's status)"
echo "location with rules of its own:       $own (the server's rule would answer 466)"
echo "location with only a status of its own: $status_only (server's rule, location's status)"

ok=1
[ "$first" = 200 ] && [ "$plain" = 429 ] || ok=0
[ "$own" = "200 200 200" ] || ok=0
[ "$status_only" = 466 ] || ok=0
if [ "$ok" = 1 ]; then
	echo "as modelled: a location's own limit_req rules replace the server's; limit_req_status is inherited on its own"
	exit 0
fi
echo "NGINX did not behave as attache models NGF's RateLimitPolicy" >&2
exit 1
