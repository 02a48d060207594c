#!/bin/sh
# Like the official image: /etc/nginx/templates/*.template -> /etc/nginx/conf.d/* with ${VAR} replaced by
# the environment (only variables that are defined, optionally only those with NGINX_ENVSUBST_FILTER's prefix).
set -e
template_dir="${NGINX_ENVSUBST_TEMPLATE_DIR:-/etc/nginx/templates}"
suffix="${NGINX_ENVSUBST_TEMPLATE_SUFFIX:-.template}"
output_dir="${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}"
filter="${NGINX_ENVSUBST_FILTER:-}"

[ -d "$template_dir" ] || exit 0
if [ ! -w "$output_dir" ]; then
    echo "$0: ERROR: $template_dir exists, but $output_dir is not writable" >&2
    exit 0
fi
defined_envs=$(printf '${%s} ' $(awk "END { for (name in ENVIRON) { print ( name ~ /${filter}/ ) ? name : \"\" } }" </dev/null))
find "$template_dir" -follow -type f -name "*$suffix" -print | while read -r template; do
    relative_path="${template#"$template_dir/"}"
    output_path="$output_dir/${relative_path%"$suffix"}"
    subdir=$(dirname "$relative_path")
    mkdir -p "$output_dir/$subdir"
    echo "$0: Running envsubst on $template to $output_path"
    envsubst "$defined_envs" <"$template" >"$output_path"
done
