; Inno Setup 6 script for Pitcrew (ISCC /DAppVersion=x.y.z packaging\windows\pitcrew.iss).
; NOT RUN YET: written from the Inno Setup documentation. Per-user install (no admin), a Start
; menu entry for the tray app, `pitcrew` added to the user's PATH, clean uninstall (the user's
; own data in %LOCALAPPDATA%\pitcrew is kept).
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif

[Setup]
AppId={{6F2B8E0C-4B7D-4A1E-9C55-2D7E1B3A9F10}
AppName=Pitcrew
AppVersion={#AppVersion}
AppPublisher=Pitcrew
DefaultDirName={autopf}\Pitcrew
DefaultGroupName=Pitcrew
PrivilegesRequired=lowest
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\build
OutputBaseFilename=pitcrew-{#AppVersion}-setup
SetupIconFile=..\..\resources\icons\pitcrew.ico
UninstallDisplayIcon={app}\pitcrew-tray.exe
Compression=lzma2
SolidCompression=yes
ChangesEnvironment=yes
WizardStyle=modern

[Files]
Source: "..\..\build\dist\pitcrew\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Pitcrew"; Filename: "{app}\pitcrew-tray.exe"
Name: "{group}\Uninstall Pitcrew"; Filename: "{uninstallexe}"

[Registry]
; `pitcrew` on the user's PATH (an uninstall leaves this entry; it points nowhere then)
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; \
  ValueData: "{olddata};{app}"; Check: NeedsAddPath(ExpandConstant('{app}')); \
  Flags: preservestringtype
; start at login is Pitcrew's own toggle (the Run key); remove it with the app
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueName: "Pitcrew"; \
  Flags: uninsdeletevalue dontcreatekey

[Run]
Filename: "{app}\pitcrew-tray.exe"; Description: "Start Pitcrew"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Path) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;
