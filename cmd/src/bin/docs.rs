// SPDX-License-Identifier: GPL-2.0
//! `dynprobe-docs SHARE`: writes dynprobe's completions and man page
//! under SHARE (a `share/` directory), as `make install-command` installs
//! them (tools/setup/command runs it).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [share] = args.as_slice() else {
        eprintln!("usage: dynprobe-docs SHARE");
        std::process::exit(2);
    };
    match dynprobe_cmd::docs::write_all(std::path::Path::new(share)) {
        Ok(written) => {
            for p in written {
                println!("{}", p.display());
            }
        }
        Err(e) => {
            eprintln!("dynprobe-docs: {share}: {e}");
            std::process::exit(1);
        }
    }
}
