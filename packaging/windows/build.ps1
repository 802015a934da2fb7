# Windows: the PyInstaller bundle (pitcrew.exe for the command line, pitcrew-tray.exe for the
# tray without a console window) and an Inno Setup installer.
# NOT RUN YET: written from the PyInstaller and Inno Setup documentation; this project's
# build machines are Linux. Pitcrew supervises tmux panes, so on Windows it is useful with
# tmux from WSL/MSYS2 on PATH; say so to users.
#
#   powershell -ExecutionPolicy Bypass -File packaging\windows\build.ps1
#   → build\pitcrew-<version>-setup.exe  (needs Inno Setup 6: ISCC.exe on PATH or default dir)
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..\..")
$started = Get-Date
$venv = "build\venv-windows"
if (-not (Test-Path "$venv\Scripts\python.exe")) { py -3.11 -m venv $venv }
& "$venv\Scripts\python.exe" -m pip install -q -e ".[package]"
$version = & "$venv\Scripts\python.exe" -c "from pitcrew.supervisor import __version__; print(__version__)"
& "$venv\Scripts\pyinstaller.exe" --noconfirm --clean --log-level WARN --distpath build\dist `
  --workpath build\work-windows packaging\pitcrew.spec
& build\dist\pitcrew\pitcrew.exe --version
$iscc = (Get-Command ISCC.exe -ErrorAction SilentlyContinue).Source
if (-not $iscc) { $iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
& $iscc "/DAppVersion=$version" packaging\windows\pitcrew.iss
$size = "{0:N0} MB" -f ((Get-ChildItem build\dist\pitcrew -Recurse | Measure-Object Length -Sum).Sum / 1MB)
Write-Output "pitcrew: bundle $size, built in $([int]((Get-Date) - $started).TotalSeconds) s"
