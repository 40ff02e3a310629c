// The board's page: one self-contained HTML document (its CSS and script
// inline, nothing fetched from anywhere but the server that sent it). It
// loads /data.json, then follows /events; every text from the run is set
// as text, never as markup.
#pragma once

#include <string>

namespace devgraph::board {

const std::string& board_page();

}  // namespace devgraph::board
