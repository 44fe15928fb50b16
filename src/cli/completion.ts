import { configError } from "../errors/failures.ts";
import { allFlags } from "./flag-table.ts";

/** Every option, from the one flag table. */
const FLAGS = allFlags().map((f) => `--${f}`);

/** A completion script for the shell: commands, flags, and configured server names. */
export function completionScript(shell: string | undefined, names: readonly string[]): string {
  const commands = names.join(" ");
  const flags = FLAGS.join(" ");
  switch (shell) {
    case "bash":
      return `# tether completion for bash: eval "$(tether completion bash)"
_tether() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands}" -- "$cur"))
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "${flags}" -- "$cur"))
  else
    local names
    names=$(tether servers --json 2>/dev/null | sed -n 's/.*"name":"\\([^"]*\\)".*/\\1/gp' | tr ',' '\\n')
    COMPREPLY=($(compgen -W "$names" -- "$cur"))
  fi
}
complete -o default -F _tether tether
`;
    case "zsh":
      return `#compdef tether
# tether completion for zsh: eval "$(tether completion zsh)"
_tether() {
  if (( CURRENT == 2 )); then
    compadd ${commands}
  elif [[ "$words[CURRENT]" == -* ]]; then
    compadd -- ${flags}
  else
    _files
  fi
}
compdef _tether tether
`;
    case "fish":
      return `# tether completion for fish: tether completion fish > ~/.config/fish/completions/tether.fish
complete -c tether -f -n "__fish_use_subcommand" -a "${commands}"
${FLAGS.map((f) => `complete -c tether -l ${f.slice(2)}`).join("\n")}
`;
    default:
      throw configError("invalid_args", "completion takes one of bash, zsh or fish");
  }
}
