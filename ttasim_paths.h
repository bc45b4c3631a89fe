#define TTASIM_DATADIR "/usr/local/share/ttasim"
