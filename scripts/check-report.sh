#!/usr/bin/env bash
# Renders a report page (DIR/index.html, as `dstein reproduce --out-dir DIR`
# writes it) in headless Chromium and saves a screenshot of the whole page,
# so that a reviewer can look at the page as a browser shows it.
#
# Usage: scripts/check-report.sh DIR [SCREENSHOT.png]
#   SCREENSHOT.png defaults to DIR/index.png.
# Environment:
#   WIDTH       the window's width in CSS pixels (default 1400)
#   MAX_HEIGHT  the most pixels of the page's height to capture (default 60000)
#   PARTS       also write the screenshot in parts of this many pixels'
#               height, SCREENSHOT-01.png, … (default 0: none), for viewers
#               that shrink tall images
#
# Installs Debian's chromium with apt-get when it is missing (needs root or
# sudo and a reachable Debian mirror). The whole page is captured through
# Chromium's DevTools protocol (--remote-debugging-pipe) by a small Go
# program that this script writes to a temporary folder; if that fails, the
# screenshot is of a 16000-pixel-tall window (chromium --screenshot) cut
# below the page's end. Prints the screenshot's path (and the parts'); exits
# non-zero with a message when the page is missing, Chromium fails or the
# screenshot is blank.
set -euo pipefail

die() {
	echo "check-report: $*" >&2
	exit 1
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/check-report.sh DIR [SCREENSHOT.png]"
dir=$1
[ -d "$dir" ] || die "$dir is not a directory"
page=$(cd "$dir" && pwd)/index.html
[ -f "$page" ] || die "$page does not exist (dstein reproduce --out-dir $dir writes it)"
shot=${2:-$dir/index.png}
case $shot in
*.png) ;;
*) die "the screenshot's name must end in .png: $shot" ;;
esac
shotdir=$(dirname "$shot")
[ -d "$shotdir" ] || die "the screenshot's directory $shotdir does not exist"
shot=$(cd "$shotdir" && pwd)/$(basename "$shot")
width=${WIDTH:-1400}
maxheight=${MAX_HEIGHT:-60000}
parts=${PARTS:-0}
for v in "$width" "$maxheight" "$parts"; do
	[[ $v =~ ^[0-9]+$ ]] || die "WIDTH, MAX_HEIGHT and PARTS must be whole numbers, not $v"
done
command -v go >/dev/null 2>&1 || die "go is missing (it captures and checks the screenshot)"

browser=""
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then
		browser=$b
		break
	fi
done
if [ -z "$browser" ]; then
	echo "check-report: chromium is missing; installing Debian's chromium with apt-get" >&2
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "chromium is missing and installing it needs root or sudo"
		sudo=sudo
	fi
	$sudo apt-get update -qq || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null ||
		die "apt-get install chromium failed"
	command -v chromium >/dev/null 2>&1 || die "chromium is still missing after apt-get install"
	browser=chromium
fi
echo "check-report: $("$browser" --version 2>/dev/null || echo "$browser")" >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/shoot"
cat >"$tmp/shoot/main.go" <<'EOF'
// Command shoot takes a screenshot of a whole web page with headless
// Chromium (the DevTools protocol over --remote-debugging-pipe), or cuts a
// screenshot taken otherwise below the page's end; then it checks that the
// screenshot is not blank and writes it, and its parts when asked.
//
//	shoot full BROWSER URL OUT.png WIDTH MAXHEIGHT PARTS PROFILE
//	shoot trim IN.png OUT.png PARTS
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 9 && os.Args[1] == "full":
		err = full(os.Args[2], os.Args[3], os.Args[4], atoi(os.Args[5]), atoi(os.Args[6]), atoi(os.Args[7]), os.Args[8])
	case len(os.Args) == 5 && os.Args[1] == "trim":
		err = trim(os.Args[2], os.Args[3], atoi(os.Args[4]))
	default:
		err = errors.New("usage: shoot full BROWSER URL OUT WIDTH MAXHEIGHT PARTS PROFILE | shoot trim IN OUT PARTS")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "check-report:", err)
		if errors.Is(err, errBlank) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

// errBlank is the error of a screenshot with (almost) nothing drawn.
var errBlank = errors.New("the screenshot is blank")

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "check-report:", err)
		os.Exit(2)
	}
	return n
}

// cdp is a DevTools protocol connection over Chromium's pipes: JSON
// messages ended by a NUL byte, commands on fd 3, replies on fd 4.
type cdp struct {
	w      *os.File
	msgs   chan map[string]json.RawMessage
	id     int
	events []string // the methods of the events seen, "session method"
}

func (c *cdp) call(session, method string, params any, result any) error {
	c.id++
	msg := map[string]any{"id": c.id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m := <-c.msgs:
			if m == nil {
				return fmt.Errorf("%s: chromium closed the pipe", method)
			}
			if id, ok := m["id"]; !ok {
				var s, ev string
				json.Unmarshal(m["sessionId"], &s)
				json.Unmarshal(m["method"], &ev)
				c.events = append(c.events, s+" "+ev)
				continue
			} else if string(id) != strconv.Itoa(c.id) {
				continue
			}
			if e, ok := m["error"]; ok {
				return fmt.Errorf("%s: %s", method, e)
			}
			if result == nil {
				return nil
			}
			return json.Unmarshal(m["result"], result)
		case <-timeout:
			return fmt.Errorf("%s: no answer from chromium in 60 s", method)
		}
	}
}

// wait waits for the event method of the session.
func (c *cdp) wait(session, method string, d time.Duration) error {
	timeout := time.After(d)
	for {
		for _, e := range c.events {
			if e == session+" "+method {
				return nil
			}
		}
		select {
		case m := <-c.msgs:
			if m == nil {
				return fmt.Errorf("waiting for %s: chromium closed the pipe", method)
			}
			if _, ok := m["id"]; !ok {
				var s, ev string
				json.Unmarshal(m["sessionId"], &s)
				json.Unmarshal(m["method"], &ev)
				c.events = append(c.events, s+" "+ev)
			}
		case <-timeout:
			return fmt.Errorf("no %s in %v", method, d)
		}
	}
}

func full(browser, url, out string, width, maxHeight, parts int, profile string) error {
	toChrome, cmdIn, err := os.Pipe()
	if err != nil {
		return err
	}
	fromChrome, cmdOut, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--user-data-dir="+profile, "--force-device-scale-factor=1",
		fmt.Sprintf("--window-size=%d,1200", width), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, cmdOut} // fd 3: commands, fd 4: replies
	log, err := os.Create(profile + ".log")
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	toChrome.Close()
	cmdOut.Close()
	defer func() {
		cmdIn.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	c := &cdp{w: cmdIn, msgs: make(chan map[string]json.RawMessage, 64)}
	go func() {
		r := bufio.NewReaderSize(fromChrome, 1<<20)
		for {
			b, err := r.ReadBytes(0)
			if err != nil {
				close(c.msgs)
				return
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(b[:len(b)-1], &m) == nil {
				c.msgs <- m
			}
		}
	}()

	var target struct{ TargetID string }
	if err := c.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return err
	}
	var attached struct{ SessionID string }
	if err := c.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return err
	}
	s := attached.SessionID
	if err := c.call(s, "Page.enable", map[string]any{}, nil); err != nil {
		return err
	}
	if err := c.call(s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": 1200, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return err
	}
	var nav struct{ ErrorText string }
	if err := c.call(s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("loading %s: %s", url, nav.ErrorText)
	}
	if err := c.wait(s, "Page.loadEventFired", 60*time.Second); err != nil { // after every image
		return err
	}
	time.Sleep(500 * time.Millisecond)
	var metrics struct {
		ContentSize, CSSContentSize struct{ Width, Height float64 }
	}
	if err := c.call(s, "Page.getLayoutMetrics", map[string]any{}, &metrics); err != nil {
		return err
	}
	size := metrics.CSSContentSize
	if size.Height == 0 {
		size = metrics.ContentSize
	}
	height := int(math.Ceil(size.Height))
	if height <= 0 {
		return errors.New("the page has no height")
	}
	if height > maxHeight {
		fmt.Fprintf(os.Stderr, "check-report: the page is %d pixels tall; the screenshot shows its first %d (MAX_HEIGHT)\n", height, maxHeight)
		height = maxHeight
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	const tile = 4000 // pixels of height per capture, well below the compositor's limits
	for y := 0; y < height; y += tile {
		h := min(tile, height-y)
		var shot struct{ Data string }
		clip := map[string]any{"x": 0, "y": y, "width": width, "height": h, "scale": 1}
		if err := c.call(s, "Page.captureScreenshot", map[string]any{"format": "png", "clip": clip, "captureBeyondViewport": true}, &shot); err != nil {
			return err
		}
		b, err := base64.StdEncoding.DecodeString(shot.Data)
		if err != nil {
			return err
		}
		part, err := png.Decode(strings.NewReader(string(b)))
		if err != nil {
			return fmt.Errorf("a capture of chromium's: %w", err)
		}
		draw.Draw(img, image.Rect(0, y, width, y+h), part, part.Bounds().Min, draw.Src)
	}
	c.call("", "Browser.close", map[string]any{}, nil)
	if err := check(img); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "check-report: captured the whole page, %dx%d pixels\n", width, height)
	return write(img, out, parts)
}

// trim cuts a screenshot of a tall window below the last row that differs
// from the background (the bottom-left pixel's colour), with a margin.
func trim(in, out string, parts int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	src, err := png.Decode(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	b := src.Bounds()
	img := image.NewRGBA(b)
	draw.Draw(img, b, src, b.Min, draw.Src)
	bg := img.RGBAAt(b.Min.X, b.Max.Y-1)
	last := b.Min.Y
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.RGBAAt(x, y) != bg {
				last = y
				break
			}
		}
	}
	if last >= b.Max.Y-2 {
		fmt.Fprintf(os.Stderr, "check-report: the page is taller than the %d-pixel window; the screenshot shows its top\n", b.Dy())
	}
	cut := img.SubImage(image.Rect(b.Min.X, b.Min.Y, b.Max.X, min(last+40, b.Max.Y))).(*image.RGBA)
	if err := check(cut); err != nil {
		return err
	}
	return write(cut, out, parts)
}

// check refuses a blank screenshot: one with fewer than 1000 pixels that
// differ from the top-left pixel's colour.
func check(img *image.RGBA) error {
	b := img.Bounds()
	bg := img.RGBAAt(b.Min.X, b.Min.Y)
	differ := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.RGBAAt(x, y) != bg {
				differ++
			}
		}
	}
	if differ < 1000 {
		return fmt.Errorf("%w: %d pixels differ from the background", errBlank, differ)
	}
	return nil
}

func write(img *image.RGBA, out string, parts int) error {
	if err := encode(img, out); err != nil {
		return err
	}
	fmt.Println(out)
	if parts <= 0 {
		return nil
	}
	b := img.Bounds()
	base := strings.TrimSuffix(out, ".png")
	for i, y := 1, b.Min.Y; y < b.Max.Y; i, y = i+1, y+parts {
		name := fmt.Sprintf("%s-%02d.png", base, i)
		if err := encode(img.SubImage(image.Rect(b.Min.X, y, b.Max.X, min(y+parts, b.Max.Y))), name); err != nil {
			return err
		}
		fmt.Println(name)
	}
	return nil
}

func encode(img image.Image, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
EOF
(cd "$tmp/shoot" && GOFLAGS= GO111MODULE=off go build -o shoot main.go) || die "cannot build the screenshot program"
shoot=$tmp/shoot/shoot

rc=0
timeout 300 "$shoot" full "$browser" "file://$page" "$shot" "$width" "$maxheight" "$parts" "$tmp/profile" >"$tmp/paths" || rc=$?
case $rc in
0)
	cat "$tmp/paths"
	exit 0
	;;
3) die "$page shows nothing" ;;
esac
[ -f "$tmp/profile.log" ] && tail -5 "$tmp/profile.log" >&2
echo "check-report: the full-page capture failed; taking a screenshot of a tall window instead" >&2
raw=$tmp/raw.png
# --virtual-time-budget lets the images load before the shot.
if ! timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--no-first-run --no-default-browser-check --disable-extensions \
	--user-data-dir="$tmp/profile2" --force-device-scale-factor=1 \
	--virtual-time-budget=5000 --window-size="$width,16000" \
	--screenshot="$raw" "file://$page" >"$tmp/chromium.log" 2>&1; then
	cat "$tmp/chromium.log" >&2
	die "chromium failed to render $page"
fi
[ -s "$raw" ] || {
	cat "$tmp/chromium.log" >&2
	die "chromium wrote no screenshot"
}
"$shoot" trim "$raw" "$shot" "$parts" || die "the screenshot of $page is not usable"
